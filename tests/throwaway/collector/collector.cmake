# throwaway's build part, which the add-collector test drops in with it: a
# collector's folder may build itself. This one builds its sources as the
# default would, with a definition they need, so that the build fails
# unless the top-level CMakeLists.txt ran this part.
file(GLOB THROWAWAY_SOURCES CONFIGURE_DEPENDS ${COLLECTOR_DIR}/*.cpp)
set_source_files_properties(${THROWAWAY_SOURCES} PROPERTIES COMPILE_DEFINITIONS GCLAB_THROWAWAY_BUILD_PART=1)
target_sources(gclab_gc PRIVATE ${THROWAWAY_SOURCES})
