# Turns an OpenCL C source into a C++ source defining one string constant,
# so the kernel travels inside the binary: the VM runs from any directory,
# and the source it compiles is always the one it was built with.
#   cmake -DSRC=kernels/gpu_mark.cl -DOUT=gpu_mark_source.cpp -DNAME=kMarkKernelSource -P embed.cmake
file(READ ${SRC} text)
file(WRITE ${OUT} "// Generated from ${SRC} at build time; edit that file.\n"
                  "namespace gc::gpu {\n"
                  "extern const char* const ${NAME};\n"
                  "const char* const ${NAME} = R\"GCLAB_CL(${text})GCLAB_CL\";\n"
                  "}  // namespace gc::gpu\n")
