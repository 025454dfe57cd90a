# The network layer: library tunerd_api, linked into tunerd by
# CMakeLists.txt (the hooks of daemon.h: api_options, api_option,
# api_start, api_stop).

# What REST and WebSocket share and the unit tests link alone: the
# configuration, auth, leases, the JSON shapes.
add_library(tunerd_api_base STATIC
  api_config.c
  auth.c
  json_api.c
  json_params.c
  json_tuner.c
  lease.c)
target_include_directories(tunerd_api_base PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_link_libraries(tunerd_api_base PUBLIC tunerd_core PkgConfig::JANSSON m)

# REST API v1 and the HTTP front.
set(TUNERD_API_REST_SOURCES
  http_front.c
  net_api.c
  rest.c
  rest_cache.c
  rest_lease.c
  rest_static.c
  rest_status.c
  rest_tuners.c)

# The event stream's sources (ws.c, sse.c, ...) join tunerd_api in
# CMakeLists.txt.
add_library(tunerd_api STATIC ${TUNERD_API_REST_SOURCES})
target_include_directories(tunerd_api PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
target_compile_definitions(tunerd_api PRIVATE
  TUNERD_VERSION="${PROJECT_VERSION}")
target_link_libraries(tunerd_api PUBLIC tunerd_api_base PkgConfig::MHD
                      PkgConfig::LWS PkgConfig::JANSSON)
