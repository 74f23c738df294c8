# Turns a text file into a C++ source defining one string constant, so the
# file travels inside the binary: the VM runs from any directory, and the
# text it uses is always the one it was built with. A line that is exactly
# /*GCLAB_INLINE NAME*/ is replaced by the file NAME beside SRC, so that a
# page kept as HTML, CSS and script is still one self-contained string.
#   cmake -DSRC=gc/collectors/gpu/gpu_mark.cl -DOUT=gpu_mark.cpp -DNAMESPACE=gc::gpu -DNAME=kMarkKernelSource -P embed.cmake
file(READ ${SRC} text)
get_filename_component(dir ${SRC} DIRECTORY)
string(REGEX MATCHALL "/\\*GCLAB_INLINE [^*\n]+\\*/\n" markers "${text}")
foreach(marker IN LISTS markers)
  string(REGEX REPLACE "^/\\*GCLAB_INLINE ([^*\n]+)\\*/\n$" "\\1" name "${marker}")
  file(READ ${dir}/${name} part)
  string(REPLACE "${marker}" "${part}" text "${text}")
endforeach()
if(text MATCHES "\\)GCLAB_EMBED\"")
  message(FATAL_ERROR "${SRC} contains )GCLAB_EMBED\", which would end the raw string early")
endif()
file(WRITE ${OUT} "// Generated from ${SRC} at build time; edit that file.\n"
                  "namespace ${NAMESPACE} {\n"
                  "extern const char* const ${NAME};\n"
                  "const char* const ${NAME} = R\"GCLAB_EMBED(${text})GCLAB_EMBED\";\n"
                  "}  // namespace ${NAMESPACE}\n")
