# Run by cpack (CPACK_PRE_BUILD_SCRIPTS) on the staged files before they
# are packed: strips the debug information from the static libraries
# (CPACK_STRIP_FILES strips only executables and shared libraries). A
# RelWithDebInfo build's package installs 155 MB with it, 10 MB without.
file(GLOB_RECURSE static_libs "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*.a")
foreach(lib ${static_libs})
  execute_process(COMMAND strip --strip-debug "${lib}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "strip --strip-debug ${lib} failed (${rc})")
  endif()
endforeach()
