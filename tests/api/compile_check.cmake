# Compiles C++ the way an application would and checks the outcome (ctest -L api):
#   cmake -DCOMPILER=... -DFLAGS=a;b -DINCLUDES=dir;dir -DWORK=dir
#         (-DHEADERS=gpuk/x.hpp;... | -DSOURCES=file;...) -P compile_check.cmake
# HEADERS: each header, alone in a translation unit of its own, must compile (a .cu when the
# compiler is nvcc). SOURCES: each source must fail, and its diagnostics must say what its line
# "// expect: TEXT" says.
set(include_flags)
foreach(dir IN LISTS INCLUDES)
  list(APPEND include_flags "-I${dir}")
endforeach()
file(MAKE_DIRECTORY "${WORK}")
set(failures 0)

foreach(header IN LISTS HEADERS)
  if(header STREQUAL "")
    continue()
  endif()
  string(MAKE_C_IDENTIFIER "${header}" stem)
  set(source "${WORK}/${stem}.cu")
  file(WRITE "${source}" "#include \"${header}\"\nint main() { return 0; }\n")
  execute_process(COMMAND ${COMPILER} ${FLAGS} ${include_flags} -c "${source}" -o "${WORK}/${stem}.o"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(rc EQUAL 0)
    message(STATUS "ok: ${header} compiles alone (${FLAGS})")
  else()
    message(STATUS "FAILED: ${header} does not compile alone (${FLAGS}):\n${out}")
    math(EXPR failures "${failures} + 1")
  endif()
endforeach()

foreach(source IN LISTS SOURCES)
  if(source STREQUAL "")
    continue()
  endif()
  get_filename_component(stem "${source}" NAME_WE)
  file(STRINGS "${source}" expect_line REGEX "^// expect: ")
  string(REGEX REPLACE "^// expect: " "" EXPECT "${expect_line}")
  if(EXPECT STREQUAL "")
    message(FATAL_ERROR "${source} has no line \"// expect: TEXT\"")
  endif()
  execute_process(COMMAND ${COMPILER} ${FLAGS} ${include_flags} -c "${source}" -o "${WORK}/${stem}.o"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  string(FIND "${out}" "${EXPECT}" at)
  if(rc EQUAL 0)
    message(STATUS "FAILED: ${stem} compiled; it should be refused with \"${EXPECT}\"")
    math(EXPR failures "${failures} + 1")
  elseif(at EQUAL -1)
    message(STATUS "FAILED: ${stem} was refused, but not with \"${EXPECT}\":\n${out}")
    math(EXPR failures "${failures} + 1")
  else()
    message(STATUS "ok: ${stem} is refused with \"${EXPECT}\"")
  endif()
endforeach()

if(failures GREATER 0)
  message(FATAL_ERROR "${failures} compile check(s) failed")
endif()
