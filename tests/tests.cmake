# Every tests/FOLDER/**/NAME.src that has a NAME.out beside it is one CTest
# test, FOLDER/NAME, run under every registered collector, plain and
# stressed (tests/each_collector.sh). Files without .out are modules that
# tests import.
function(gclab_add_program_tests folder)
  file(GLOB_RECURSE sources CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/${folder}/*.src)
  foreach(src ${sources})
    string(REGEX REPLACE "\\.src$" ".out" expected ${src})
    if(EXISTS ${expected})
      file(RELATIVE_PATH name ${CMAKE_SOURCE_DIR}/tests/${folder} ${src})
      string(REGEX REPLACE "\\.src$" "" name ${name})
      add_test(NAME ${folder}/${name}
               COMMAND ${CMAKE_SOURCE_DIR}/tests/each_collector.sh $<TARGET_FILE:vm> ${src})
    endif()
  endforeach()
endfunction()

# The language suite, and the collector-agnostic GC tests.
gclab_add_program_tests(lang)
gclab_add_program_tests(gc)

# Samples print what their documentation says they print.
add_test(NAME samples/binary_trees_10
         COMMAND ${CMAKE_SOURCE_DIR}/tests/samples.sh $<TARGET_FILE:vm> ${CMAKE_SOURCE_DIR})

# Observability (gc/observe, docs/observability.md): --gc-log, --gc-stats,
# --gc-trace on known programs; every collector's figures (units, shares of
# the pause, nesting, threads); the --gc-report page in headless Chromium
# (skipped, status 77, where no chromium is installed).
target_compile_definitions(unit_tests PRIVATE GCLAB_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
add_test(NAME observe/outputs
         COMMAND ${CMAKE_SOURCE_DIR}/tests/observe/outputs_test.sh $<TARGET_FILE:vm> ${CMAKE_SOURCE_DIR})
add_test(NAME observe/figures
         COMMAND ${CMAKE_SOURCE_DIR}/tests/observe/figures_test.sh $<TARGET_FILE:vm> ${CMAKE_SOURCE_DIR})
set_tests_properties(observe/figures PROPERTIES TIMEOUT 600)
add_test(NAME observe/report
         COMMAND ${CMAKE_SOURCE_DIR}/tests/observe/report_test.sh $<TARGET_FILE:vm> ${CMAKE_SOURCE_DIR})
set_tests_properties(observe/report PROPERTIES SKIP_RETURN_CODE 77)
# --gc-animate: every collector's recording, its steps against the
# collectors' counters, the page played in headless Chromium, the bounds.
add_test(NAME observe/animation
         COMMAND ${CMAKE_SOURCE_DIR}/tests/observe/animation_test.sh $<TARGET_FILE:vm> ${CMAKE_SOURCE_DIR})
# Every panel of every registered collector's report draws a mark.
add_test(NAME observe/panels
         COMMAND ${CMAKE_SOURCE_DIR}/tests/observe/panels_test.sh $<TARGET_FILE:vm> ${CMAKE_SOURCE_DIR})
set_tests_properties(observe/panels PROPERTIES SKIP_RETURN_CODE 77)

# The REPL, driven through a pseudo-terminal.
add_test(NAME repl COMMAND ${CMAKE_SOURCE_DIR}/tests/repl/repl_test.sh $<TARGET_FILE:vm>)
set_tests_properties(repl PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)

if(GCLAB_OPENCL)
  # The gpu collector where there is no OpenCL device.
  add_test(NAME gpu/no_device COMMAND ${CMAKE_SOURCE_DIR}/tests/gpu/no_device_test.sh $<TARGET_FILE:vm>)
  # --gpu-heap=shared marks the heap in place and transfers nothing.
  add_test(NAME gpu/shared_heap COMMAND ${CMAKE_SOURCE_DIR}/tests/gpu/shared_heap_test.sh $<TARGET_FILE:vm> ${CMAKE_SOURCE_DIR})
  # Work-groups sharing one queue end their waits with one device thread or two.
  add_test(NAME gpu/shared_queue COMMAND ${CMAKE_SOURCE_DIR}/tests/gpu/shared_queue_test.sh $<TARGET_FILE:vm> ${CMAKE_SOURCE_DIR})
else()
  # A vm built without OpenCL: gpu says why it cannot run; the others run.
  add_test(NAME gpu/without_opencl COMMAND ${CMAKE_SOURCE_DIR}/tests/gpu/without_opencl_test.sh $<TARGET_FILE:vm>)
endif()

# The command line built from the VM's and the collectors' option tables.
add_test(NAME cli/options COMMAND ${CMAKE_SOURCE_DIR}/tests/cli/options_test.sh $<TARGET_FILE:vm>)
add_test(NAME cli/cacheaware_options COMMAND ${CMAKE_SOURCE_DIR}/tests/cli/cacheaware_options_test.sh $<TARGET_FILE:vm>)
add_test(NAME cli/option_fuzz COMMAND ${CMAKE_SOURCE_DIR}/tests/cli/option_fuzz.sh $<TARGET_FILE:vm>)
add_test(NAME cli/compare COMMAND ${CMAKE_SOURCE_DIR}/tests/cli/compare_test.sh $<TARGET_FILE:vm>)
# --min-heap against a scan of sizes, --heap=Nx, --compare --heaps, and out of memory in --compare.
add_test(NAME cli/min_heap COMMAND ${CMAKE_SOURCE_DIR}/tests/cli/min_heap_test.sh $<TARGET_FILE:vm> ${CMAKE_SOURCE_DIR})
add_test(NAME cli/paper_config COMMAND ${CMAKE_SOURCE_DIR}/tests/cli/paper_config_test.sh $<TARGET_FILE:vm>)
# --gc=none: out of memory where collection is needed, gc() ignored and logged, zero collections.
add_test(NAME cli/none COMMAND ${CMAKE_SOURCE_DIR}/tests/cli/none_test.sh $<TARGET_FILE:vm>)
# scripts/bench --against: two builds timed in the same rounds, their bests, spreads and ratio.
add_test(NAME cli/bench_against COMMAND ${CMAKE_SOURCE_DIR}/tests/cli/bench_against_test.sh $<TARGET_FILE:vm> ${CMAKE_SOURCE_DIR})
add_test(NAME cli/incremental COMMAND ${CMAKE_SOURCE_DIR}/tests/cli/incremental_test.sh $<TARGET_FILE:vm>)
add_test(NAME snapshots COMMAND ${CMAKE_SOURCE_DIR}/tests/snapshots/snapshot_test.sh $<TARGET_FILE:vm> ${CMAKE_SOURCE_DIR})
# cmake --install into a scratch prefix: vm, its generated manual page, the docs and the labs' programs.
add_test(NAME cli/install COMMAND ${CMAKE_SOURCE_DIR}/tests/cli/install_test.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
add_test(NAME course/labs COMMAND ${CMAKE_SOURCE_DIR}/tests/course/labs_test.sh ${CMAKE_BINARY_DIR} ${CMAKE_SOURCE_DIR})
# Every file a comment names exists (docs and sources renamed leave no stale pointer).
add_test(NAME tree/named_files COMMAND ${CMAKE_SOURCE_DIR}/tests/tree/named_files_test.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(tree/named_files PROPERTIES SKIP_RETURN_CODE 77)
# Each layer includes only what is below it, and no collector another's files (docs/architecture.md).
add_test(NAME tree/include_rules COMMAND ${CMAKE_SOURCE_DIR}/tests/tree/include_rules_test.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(tree/include_rules PROPERTIES SKIP_RETURN_CODE 77)

# cacheaware where one GC thread hosts several cores, on fibers keeping
# arrays near a partition's size (tests/cacheaware/README.md): the smoke
# slice of the campaign, around the configuration that once spun forever in
# balancing; the short and full campaigns are manual commands.
add_test(NAME cacheaware/campaign_smoke
         COMMAND ${CMAKE_SOURCE_DIR}/tests/cacheaware/campaign.sh --smoke --vm $<TARGET_FILE:vm>)

# Hostile inputs (tests/hostile/README.md): one test per case, each run
# under every collector that can run here.
file(GLOB hostile_cases CONFIGURE_DEPENDS ${CMAKE_SOURCE_DIR}/tests/hostile/*.case)
foreach(case ${hostile_cases})
  get_filename_component(name ${case} NAME_WE)
  add_test(NAME hostile/${name} COMMAND ${CMAKE_SOURCE_DIR}/tests/hostile/hostile_test.sh $<TARGET_FILE:vm> ${case})
endforeach()

# A collector is one folder plus its registry line: a test-only collector
# dropped into a copy of the tree, built and run there (one full build).
add_test(NAME throwaway/add_collector COMMAND ${CMAKE_SOURCE_DIR}/tests/throwaway/add_collector_test.sh ${CMAKE_SOURCE_DIR})
set_tests_properties(throwaway/add_collector PROPERTIES COST 1000 TIMEOUT 3600 SKIP_RETURN_CODE 77)

# accel's figures: simulated pauses labelled as such, the spill peak, and
# a leak's out-of-memory error within the timeout (docs/collectors/accel.md).
add_test(NAME accel/figures COMMAND ${CMAKE_SOURCE_DIR}/tests/accel/figures_test.sh $<TARGET_FILE:vm>)
set_tests_properties(accel/figures PROPERTIES TIMEOUT 60)

# The figures docs/ marks with <!-- constant: EXPR --> equal the named
# constants in the code (the marker's syntax: tests/docs/constants_test.sh).
add_test(NAME docs/constants COMMAND ${CMAKE_SOURCE_DIR}/tests/docs/constants_test.sh ${CMAKE_SOURCE_DIR})
