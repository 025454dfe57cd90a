# The .deb: "cmake --build BUILD --target package" (or "cpack -G DEB" in
# BUILD) makes tunerd_<version>_<arch>.deb.  Build it with
# -DCMAKE_INSTALL_PREFIX=/usr: the programs' compiled-in paths (plugins,
# dashboard) are the prefix's.  dpkg-shlibdeps (dpkg-dev) computes
# Depends from the libraries the programs link.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME tunerd)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "tunerd maintainers <tunerd@example.org>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "network tuner server")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "tunerd drives DVB and analog tuner chips through the /dev/tuner kernel\n\
stub: each chip's driver runs as a plugin in its own worker process, and\n\
the daemon serves a JSON REST, WebSocket and Server-Sent Events API,\n\
transport streams and a dashboard on one port.  Local DVB applications\n\
keep using the kernel's frontends.\n\
.\n\
The package holds the daemon with its systemd unit, the tunerctl client,\n\
the chip plugins, the stub module's DKMS tree and a simulated box.")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://example.org/tunerd")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The tunerd Python package and tunerd-mythtv-recorder (clients/) run on
# Debian's python3 with requests and websocket-client; the libraries the
# programs link (wslay, libcrypto among them) come from dpkg-shlibdeps.
set(CPACK_DEBIAN_PACKAGE_DEPENDS
    "systemd | systemd-standalone-sysusers, python3:any, python3-requests, python3-websocket")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "dkms, ffmpeg")
set(CPACK_STRIP_FILES ON)
# Files under /etc are the administrator's once installed.
file(WRITE ${CMAKE_BINARY_DIR}/cpack-control/conffiles
     "${TUNERD_CONFIG_DIR}/tunerd.json\n")
# postinst: the tunerd system user (sysusers.d) and the file's group.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_BINARY_DIR}/cpack-control/conffiles
    ${PROJECT_SOURCE_DIR}/dist/postinst)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
