# Imports the pinned llama.cpp build (v0.5.0, de3ff815) from the per-machine cache that
# scripts/llama-cpp.sh fills. Defines:
#   sf::llama         libllama + ggml (the CPU backend and the flavor's GPU backend, if any)
#   sf::llama_common  llama.cpp's `common` (chat templates, Jinja, samplers, JSON schema → grammar)
#   sf::mtmd          llama.cpp's multimodal library (tools/mtmd: image and audio projectors,
#                     mtmd.h and mtmd-helper.h), built by the tree as part of llama-server
#   sf::httplib       the cpp-httplib copy the tree vendors
#   sf::json          the nlohmann/json copy the tree vendors (header only)
# Set SUPERFLUID_LLAMA_DIR to use an existing build directory instead of the cache. Unset (or
# still the directory the script named last time), every configure asks scripts/llama-cpp.sh
# again: a changed patch or flavor names another cached build, and an existing build tree follows.

if(NOT SUPERFLUID_LLAMA_DIR OR SUPERFLUID_LLAMA_DIR STREQUAL "${SF_LLAMA_DIR_FROM_SCRIPT}")
  message(STATUS "llama.cpp: ensuring the cached build (scripts/llama-cpp.sh)")
  execute_process(
    COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/scripts/llama-cpp.sh
    OUTPUT_VARIABLE _llama_out
    RESULT_VARIABLE _llama_rc
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT _llama_rc EQUAL 0)
    message(FATAL_ERROR "scripts/llama-cpp.sh failed (${_llama_rc})")
  endif()
  string(REGEX REPLACE ".*\n" "" _llama_dir "${_llama_out}")
  set(SUPERFLUID_LLAMA_DIR "${_llama_dir}" CACHE PATH "llama.cpp cache directory (src/ and build/)" FORCE)
  set(SF_LLAMA_DIR_FROM_SCRIPT "${_llama_dir}" CACHE INTERNAL "the directory llama-cpp.sh named")
endif()
message(STATUS "llama.cpp: ${SUPERFLUID_LLAMA_DIR}")

set(LLAMA_SRC "${SUPERFLUID_LLAMA_DIR}/src")
set(LLAMA_BUILD "${SUPERFLUID_LLAMA_DIR}/build")
find_package(Threads REQUIRED)

function(_sf_import name lib)
  add_library(${name} STATIC IMPORTED GLOBAL)
  set_target_properties(${name} PROPERTIES IMPORTED_LOCATION "${LLAMA_BUILD}/${lib}")
endfunction()

_sf_import(sf_ggml_base ggml/src/libggml-base.a)
_sf_import(sf_ggml_cpu ggml/src/libggml-cpu.a)
_sf_import(sf_ggml ggml/src/libggml.a)
_sf_import(sf_llama_lib src/libllama.a)
_sf_import(sf_common_lib common/libllama-common.a)
_sf_import(sf_common_base common/libllama-common-base.a)
_sf_import(sf_httplib_lib vendor/cpp-httplib/libcpp-httplib.a)
_sf_import(sf_mtmd_lib tools/mtmd/libmtmd.a)
_sf_import(sf_vendor_hash vendor/hash/libvendor-hash.a)  # mtmd's image hashing (xxhash, sha)

# The GPU backend of the build's flavor (scripts/gpu-flavor.sh), beside the CPU one: whichever
# library the cached build has. ggml registers each at startup (ggml-backend-reg.cpp).
set(_sf_gpu_backends "")
set(SUPERFLUID_GPU_FLAVOR "cpu")
if(EXISTS "${LLAMA_BUILD}/ggml/src/ggml-vulkan/libggml-vulkan.a")
  find_package(Vulkan REQUIRED)
  _sf_import(sf_ggml_vulkan ggml/src/ggml-vulkan/libggml-vulkan.a)
  set_target_properties(sf_ggml_vulkan PROPERTIES INTERFACE_LINK_LIBRARIES "sf_ggml_base;Vulkan::Vulkan")
  list(APPEND _sf_gpu_backends sf_ggml_vulkan)
  set(SUPERFLUID_GPU_FLAVOR "vulkan")
endif()
if(EXISTS "${LLAMA_BUILD}/ggml/src/ggml-cuda/libggml-cuda.a")
  find_package(CUDAToolkit REQUIRED)
  _sf_import(sf_ggml_cuda ggml/src/ggml-cuda/libggml-cuda.a)
  # As ggml-cuda links itself without GGML_STATIC (ggml/src/ggml-cuda/CMakeLists.txt): the
  # shared CUDA runtime and cuBLAS, as the llama-server of the same build does.
  set_target_properties(sf_ggml_cuda PROPERTIES INTERFACE_LINK_LIBRARIES
    "sf_ggml_base;CUDA::cudart;CUDA::cublas;CUDA::cuda_driver")
  list(APPEND _sf_gpu_backends sf_ggml_cuda)
  set(SUPERFLUID_GPU_FLAVOR "cuda")
endif()
if(EXISTS "${LLAMA_BUILD}/ggml/src/ggml-metal/libggml-metal.a")
  _sf_import(sf_ggml_metal ggml/src/ggml-metal/libggml-metal.a)
  set_target_properties(sf_ggml_metal PROPERTIES INTERFACE_LINK_LIBRARIES
    "sf_ggml_base;-framework Foundation;-framework Metal;-framework MetalKit")
  list(APPEND _sf_gpu_backends sf_ggml_metal)
  set(SUPERFLUID_GPU_FLAVOR "metal")
endif()
if(EXISTS "${LLAMA_BUILD}/ggml/src/ggml-blas/libggml-blas.a")  # Apple: Accelerate
  _sf_import(sf_ggml_blas ggml/src/ggml-blas/libggml-blas.a)
  set_target_properties(sf_ggml_blas PROPERTIES INTERFACE_LINK_LIBRARIES
    "sf_ggml_base;-framework Accelerate")
  list(APPEND _sf_gpu_backends sf_ggml_blas)
endif()
message(STATUS "llama.cpp backends: cpu ${_sf_gpu_backends}")

# Static link order: dependents first.
set_target_properties(sf_ggml PROPERTIES INTERFACE_LINK_LIBRARIES "${_sf_gpu_backends};sf_ggml_cpu;sf_ggml_base;Threads::Threads;m;dl")
set_target_properties(sf_ggml_cpu PROPERTIES INTERFACE_LINK_LIBRARIES "sf_ggml_base")
set_target_properties(sf_llama_lib PROPERTIES INTERFACE_LINK_LIBRARIES "sf_ggml")

add_library(sf_json INTERFACE)
target_include_directories(sf_json SYSTEM INTERFACE "${LLAMA_SRC}/vendor")
add_library(sf::json ALIAS sf_json)

add_library(sf_httplib INTERFACE)
target_include_directories(sf_httplib SYSTEM INTERFACE "${LLAMA_SRC}/vendor")
target_link_libraries(sf_httplib INTERFACE sf_httplib_lib Threads::Threads)
add_library(sf::httplib ALIAS sf_httplib)

add_library(sf_llama INTERFACE)
target_include_directories(sf_llama SYSTEM INTERFACE "${LLAMA_SRC}/include" "${LLAMA_SRC}/ggml/include")
target_link_libraries(sf_llama INTERFACE sf_llama_lib)
add_library(sf::llama ALIAS sf_llama)

add_library(sf_llama_common INTERFACE)
target_include_directories(sf_llama_common SYSTEM INTERFACE "${LLAMA_SRC}/common")
target_link_libraries(sf_llama_common INTERFACE sf_common_lib sf_common_base sf_httplib sf_json sf_llama)
add_library(sf::llama_common ALIAS sf_llama_common)

# mtmd links ggml and llama publicly; stb_image, miniaudio and the other vendored headers are
# compiled into libmtmd.a, the hash library is its own archive.
set_target_properties(sf_mtmd_lib PROPERTIES INTERFACE_LINK_LIBRARIES "sf_vendor_hash;sf_llama_lib")
add_library(sf_mtmd INTERFACE)
target_include_directories(sf_mtmd SYSTEM INTERFACE "${LLAMA_SRC}/tools/mtmd")
target_link_libraries(sf_mtmd INTERFACE sf_mtmd_lib sf_llama)
add_library(sf::mtmd ALIAS sf_mtmd)

# Paths other parts of the build and the tests need.
set(SUPERFLUID_LLAMA_SERVER "${LLAMA_BUILD}/bin/llama-server" CACHE INTERNAL "")
set(SUPERFLUID_LLAMA_BENCH "${LLAMA_BUILD}/bin/llama-bench" CACHE INTERNAL "")
set(SUPERFLUID_LLAMA_SRC "${LLAMA_SRC}" CACHE INTERNAL "")
