# `cmake --install build --prefix PREFIX`: the CLI, libgpuk_core, the family plugins, the kernel
# sources, the public headers and a CMake package, in the layout of cmake/layout.cmake.
include(CMakePackageConfigHelpers)

get_property(gpuk_family_plugins GLOBAL PROPERTY GPUK_FAMILY_PLUGINS)

# Installed RPATHs are relative, as in the build tree. NVRTC's directory follows $ORIGIN for a
# toolkit outside the loader's default path (as CMake's INSTALL_RPATH_USE_LINK_PATH would add):
# it points at the CUDA toolkit, not at a file of gpuk's, and the loader's own search still
# applies when that directory does not exist.
set_target_properties(gpuk_core PROPERTIES INSTALL_RPATH "$ORIGIN;${CUDAToolkit_LIBRARY_DIR}")
set_target_properties(gpuk PROPERTIES INSTALL_RPATH "${GPUK_INSTALL_RPATH_BIN};${CUDAToolkit_LIBRARY_DIR}")
set_target_properties(${gpuk_family_plugins} PROPERTIES INSTALL_RPATH "${GPUK_INSTALL_RPATH_PLUGIN}")

install(TARGETS gpuk_core EXPORT gpukTargets LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS gpuk RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS ${gpuk_family_plugins} LIBRARY DESTINATION ${GPUK_INSTALL_PLUGINDIR})

# Everything under kernels_src/ (kernel files, include/, tuned/), read at install time: a kernel
# file dropped in since the build is installed too.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/kernels_src/ DESTINATION ${GPUK_INSTALL_KERNELSDIR})

# The public API: core/include (gpuk.hpp, tuning.hpp, error.hpp, dtype.hpp, op_table.hpp) and each family's
# public headers where its plugin folder has an include/. Core's other headers (core/src) and the
# plugin SDK (core/src/plugin) are not installed: families are built in this tree. A plugin's
# include/ is looked for at install time (OPTIONAL).
install(DIRECTORY ${PROJECT_SOURCE_DIR}/core/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(plugin IN LISTS gpuk_family_plugins)
  get_target_property(plugin_source_dir ${plugin} SOURCE_DIR)
  install(DIRECTORY ${plugin_source_dir}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR} OPTIONAL)
endforeach()

# find_package(gpuk) -> gpuk::gpuk
install(EXPORT gpukTargets NAMESPACE gpuk:: DESTINATION ${GPUK_INSTALL_CMAKEDIR})
set(gpuk_package_dir ${CMAKE_CURRENT_BINARY_DIR}/package)
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/gpukConfig.cmake.in
  ${gpuk_package_dir}/gpukConfig.cmake
  INSTALL_DESTINATION ${GPUK_INSTALL_CMAKEDIR}
  PATH_VARS GPUK_INSTALL_PLUGINDIR GPUK_INSTALL_KERNELSDIR)
# 0.x: the plugin ABI may change between minor versions.
write_basic_package_version_file(${gpuk_package_dir}/gpukConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${gpuk_package_dir}/gpukConfig.cmake ${gpuk_package_dir}/gpukConfigVersion.cmake
  DESTINATION ${GPUK_INSTALL_CMAKEDIR})

# Shell completion for the CLI (tools/cli/completions/).
install(FILES ${PROJECT_SOURCE_DIR}/tools/cli/completions/gpuk.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME gpuk)
install(FILES ${PROJECT_SOURCE_DIR}/tools/cli/completions/_gpuk DESTINATION ${CMAKE_INSTALL_DATADIR}/zsh/site-functions)
