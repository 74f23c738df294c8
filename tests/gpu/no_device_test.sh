#!/usr/bin/env bash
# --gc=gpu on a machine with no OpenCL device (the ICD loader pointed at an
# empty vendor directory): one clear line and exit status 69; --list-gcs says
# gpu cannot run (so the suite skips it); --gpu-fallback=cpu marks on the CPU.
#   tests/gpu/no_device_test.sh VM
set -u
vm=$1
empty=$(mktemp -d)
trap 'rmdir "$empty"' EXIT
export OCL_ICD_VENDORS=$empty
fail=0
check() { if eval "$2"; then echo "ok: $1"; else echo "FAIL: $1"; fail=1; fi; }

err=$("$vm" --gc=gpu -e 'print(1);' 2>&1 >/dev/null)
status=$?
check "exit status 69" '[ "$status" -eq 69 ]'
check "one line" '[ "$(printf "%s\n" "$err" | wc -l)" -eq 1 ]'
check "says there is no device and how to get one" \
  'printf "%s" "$err" | grep -q "no OpenCL device.*pocl-opencl-icd.*--gpu-fallback=cpu"'
check "--list-gcs: gpu cannot run" '"$vm" --list-gcs | grep -q "^gpu .*(cannot run: no OpenCL device"'
out=$("$vm" --gc=gpu --gpu-fallback=cpu --gc-stress=1 --gc-verify -e 'let a = [[1], [2, [3]]]; gc(); print(a);')
check "--gpu-fallback=cpu marks on the CPU" '[ "$out" = "[[1], [2, [3]]]" ]'
exit $fail
