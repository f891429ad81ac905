# One layout for an installed prefix and for the build tree, so that gpuk finds its own files
# the same way in both: relative to the directory of libgpuk_core (core/src/util/install_dirs.cpp).
#
#   PREFIX/bin/gpuk                      (the build tree keeps it at build/gpuk)
#   PREFIX/lib/libgpuk_core.so
#   PREFIX/lib/gpuk/plugins/libgpuk_family_*.so
#   PREFIX/share/gpuk/kernels/           (the build tree: a relative link to kernels_src/)
#   PREFIX/include/gpuk/
#   PREFIX/lib/cmake/gpuk/               (find_package(gpuk): gpuk::gpuk)
#
# Every RPATH is relative ($ORIGIN), so a moved build tree or prefix keeps working.
include(GNUInstallDirs)

set(GPUK_INSTALL_PLUGINDIR "${CMAKE_INSTALL_LIBDIR}/gpuk/plugins")
set(GPUK_INSTALL_KERNELSDIR "${CMAKE_INSTALL_DATADIR}/gpuk/kernels")
set(GPUK_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/gpuk")
foreach(dir IN ITEMS CMAKE_INSTALL_BINDIR CMAKE_INSTALL_LIBDIR CMAKE_INSTALL_DATADIR)
  if(IS_ABSOLUTE "${${dir}}")
    message(FATAL_ERROR "${dir} must be relative to the prefix: gpuk finds its files relative to its library")
  endif()
endforeach()

# Relative to the library's directory: compiled into libgpuk_core. ("/p" stands for any prefix.)
file(RELATIVE_PATH GPUK_PLUGIN_DIR_FROM_LIB "/p/${CMAKE_INSTALL_LIBDIR}" "/p/${GPUK_INSTALL_PLUGINDIR}")
file(RELATIVE_PATH GPUK_KERNELS_DIR_FROM_LIB "/p/${CMAKE_INSTALL_LIBDIR}" "/p/${GPUK_INSTALL_KERNELSDIR}")
file(RELATIVE_PATH gpuk_lib_from_bin "/p/${CMAKE_INSTALL_BINDIR}" "/p/${CMAKE_INSTALL_LIBDIR}")
file(RELATIVE_PATH gpuk_lib_from_plugins "/p/${GPUK_INSTALL_PLUGINDIR}" "/p/${CMAKE_INSTALL_LIBDIR}")
string(REGEX REPLACE "/$" "" gpuk_lib_from_plugins "${gpuk_lib_from_plugins}")  # "../../" -> "../.."
set(GPUK_INSTALL_RPATH_BIN "$ORIGIN/${gpuk_lib_from_bin}")
set(GPUK_INSTALL_RPATH_PLUGIN "$ORIGIN/${gpuk_lib_from_plugins}")

# The build tree, laid out like the prefix. Its RPATHs are $ORIGIN-relative too.
set(CMAKE_BUILD_RPATH_USE_ORIGIN ON)
set(GPUK_BUILD_LIBDIR "${CMAKE_BINARY_DIR}/${CMAKE_INSTALL_LIBDIR}")
set(GPUK_BUILD_PLUGINDIR "${CMAKE_BINARY_DIR}/${GPUK_INSTALL_PLUGINDIR}")

# The build tree's kernel directory links to the sources (not a copy made at build time: a
# kernel file dropped into kernels_src/ is seen at once). The link is relative, so moving the
# checkout with its build tree inside keeps it valid.
set(gpuk_kernels_link "${CMAKE_BINARY_DIR}/${GPUK_INSTALL_KERNELSDIR}")
get_filename_component(gpuk_kernels_link_dir "${gpuk_kernels_link}" DIRECTORY)
file(RELATIVE_PATH gpuk_kernels_target "${gpuk_kernels_link_dir}" "${PROJECT_SOURCE_DIR}/kernels_src")
file(MAKE_DIRECTORY "${gpuk_kernels_link_dir}")
if(IS_SYMLINK "${gpuk_kernels_link}")
  file(REMOVE "${gpuk_kernels_link}")
endif()
file(CREATE_LINK "${gpuk_kernels_target}" "${gpuk_kernels_link}" RESULT gpuk_link_result SYMBOLIC)
if(NOT gpuk_link_result EQUAL 0)
  message(FATAL_ERROR "cannot link ${gpuk_kernels_link} to ${gpuk_kernels_target}: ${gpuk_link_result}")
endif()
