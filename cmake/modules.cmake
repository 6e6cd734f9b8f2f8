# One static library per module (src/<name>/), and what a module may include enforced by the
# compiler: each module compiles against an include "view", a folder of links to its own
# source folder and to the folders of the modules it declares (transitively), nothing else.
# A module that includes a header of a module it does not declare fails to build with
# "<module>/<header>: No such file or directory". The declared graph is the one drawn in
# docs/ARCHITECTURE.md ("Modules").

# A cache entry, so tests/ and fuzz/ (not below src/, where this file is included) see it too:
# as a plain variable it was empty there and their views went to /target_<name>, one folder for
# every checkout on the machine.
set(SF_VIEWS_DIR "${CMAKE_BINARY_DIR}/module_views" CACHE INTERNAL "include views of the modules")

# sf_module_folders(<out> <module>...): the modules' folders, with their declared modules'.
function(sf_module_folders out)
  set(folders "")
  foreach(m IN LISTS ARGN)
    get_property(f GLOBAL PROPERTY SF_MODULE_FOLDERS_${m})
    if(NOT f)
      message(FATAL_ERROR "sf_module: unknown module '${m}' (declare it before its users)")
    endif()
    list(APPEND folders ${f})
  endforeach()
  list(REMOVE_DUPLICATES folders)
  set(${out} "${folders}" PARENT_SCOPE)
endfunction()

# sf_make_view(<view name> <folders>...): the link folder a target includes from.
function(sf_make_view view)
  set(dir "${SF_VIEWS_DIR}/${view}")
  file(REMOVE_RECURSE "${dir}")
  file(MAKE_DIRECTORY "${dir}")
  foreach(f IN LISTS ARGN)
    file(CREATE_LINK "${PROJECT_SOURCE_DIR}/src/${f}" "${dir}/${f}" SYMBOLIC)
  endforeach()
endfunction()

# sf_module(<name> [SOURCES src...] [MODULES module...] [LIBS lib...] [PRIVATE_LIBS lib...])
#   Builds sf_<name> from src/<name>/; MODULES are the modules it may include and links
#   (PUBLIC), LIBS other libraries its headers need, PRIVATE_LIBS those only its sources need.
#   Without SOURCES the module is header-only (an INTERFACE library).
function(sf_module name)
  cmake_parse_arguments(M "" "" "SOURCES;MODULES;LIBS;PRIVATE_LIBS" ${ARGN})
  sf_module_folders(deps ${M_MODULES})
  set(folders ${name} ${deps})
  list(REMOVE_DUPLICATES folders)
  set_property(GLOBAL PROPERTY SF_MODULE_FOLDERS_${name} "${folders}")
  sf_make_view(${name} ${folders})
  list(TRANSFORM M_MODULES PREPEND sf_ OUTPUT_VARIABLE mod_libs)
  if(M_SOURCES)
    add_library(sf_${name} STATIC ${M_SOURCES})
    target_include_directories(sf_${name} PUBLIC "${SF_VIEWS_DIR}/${name}")
    target_link_libraries(sf_${name} PUBLIC ${mod_libs} ${M_LIBS} PRIVATE ${M_PRIVATE_LIBS} sf_warnings)
  else()
    add_library(sf_${name} INTERFACE)
    target_include_directories(sf_${name} INTERFACE "${SF_VIEWS_DIR}/${name}")
    target_link_libraries(sf_${name} INTERFACE ${mod_libs} ${M_LIBS})
  endif()
endfunction()

# sf_target_view(<target> [FOLDERS folder...] MODULES module...): an executable's own source
# folders (not modules) and the modules it may include.
function(sf_target_view target)
  cmake_parse_arguments(V "" "" "FOLDERS;MODULES" ${ARGN})
  sf_module_folders(folders ${V_MODULES})
  sf_make_view(target_${target} ${V_FOLDERS} ${folders})
  target_include_directories(${target} PRIVATE "${SF_VIEWS_DIR}/target_${target}")
endfunction()
