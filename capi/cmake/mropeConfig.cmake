# find_package(mrope CONFIG): mrope's C ABI as the imported target mrope::mrope_c
# (include/mrope/mrope_c.h + lib/libmrope_c.so of this install tree).
#
#   find_package(mrope 0.1 CONFIG REQUIRED)
#   target_link_libraries(my_runtime PRIVATE mrope::mrope_c)
get_filename_component(_mrope_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
if(NOT TARGET mrope::mrope_c)
  add_library(mrope::mrope_c SHARED IMPORTED)
  set_target_properties(mrope::mrope_c PROPERTIES
    IMPORTED_LOCATION "${_mrope_prefix}/lib/libmrope_c.so"
    IMPORTED_SONAME "libmrope_c.so"
    INTERFACE_INCLUDE_DIRECTORIES "${_mrope_prefix}/include")
endif()
unset(_mrope_prefix)
