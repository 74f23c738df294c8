# The gpu collector's build part: OpenCL, which only it needs, and its
# kernel, embedded in the binary as a string and compiled for the device at
# run time. With GCLAB_OPENCL=OFF (a machine without OpenCL) it builds its
# options and without_opencl.cpp only: --list-gcs and --gc=gpu then say why
# it cannot run, and every other collector builds and runs as before.
option(GCLAB_OPENCL "Build the gpu collector's OpenCL support" ON)
if(GCLAB_OPENCL)
  find_package(OpenCL 1.2 REQUIRED)
  embed_text(GPU_KERNEL_CPP ${COLLECTOR_DIR}/gpu_mark.cl gc::gpu kMarkKernelSource)
  file(GLOB GPU_SOURCES CONFIGURE_DEPENDS ${COLLECTOR_DIR}/*.cpp)
  list(REMOVE_ITEM GPU_SOURCES ${COLLECTOR_DIR}/without_opencl.cpp)
  target_sources(gclab_gc PRIVATE ${GPU_SOURCES} ${GPU_KERNEL_CPP})
  target_link_libraries(gclab_gc PUBLIC OpenCL::OpenCL)
else()
  target_sources(gclab_gc PRIVATE ${COLLECTOR_DIR}/gpu_options.cpp ${COLLECTOR_DIR}/without_opencl.cpp)
  list(APPEND GCLAB_UNIT_TESTS_LEFT_OUT ${CMAKE_SOURCE_DIR}/tests/unit/test_gpu.cpp)
endif()
