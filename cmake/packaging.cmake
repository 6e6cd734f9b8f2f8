# Install rules and the Debian package (CPack).
#   cmake --install build --prefix PREFIX   PREFIX/bin/superfluid, the systemd user unit in
#                                           PREFIX/share/systemd/user (a path systemd --user
#                                           searches for /usr, /usr/local and ~/.local), README
#   cpack --config build/CPackConfig.cmake  superfluid_<version>_amd64.deb (prefix /usr); its
#                                           Depends come from dpkg-shlibdeps (gRPC, protobuf,
#                                           OpenSSL, SQLite, curl of the build machine's Debian)
# The unit's ExecStart is written at install time from the prefix actually used.
include(GNUInstallDirs)

install(TARGETS superfluid RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES README.md docs/ARCHITECTURE.md docs/cluster.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(CODE "
  set(SF_BINDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_BINDIR}\")
  set(SF_DOCDIR \"\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DOCDIR}\")
  set(_unit \"\$ENV{DESTDIR}\${CMAKE_INSTALL_PREFIX}/${CMAKE_INSTALL_DATADIR}/systemd/user/superfluid.service\")
  message(STATUS \"Installing: \${_unit}\")
  configure_file(\"${PROJECT_SOURCE_DIR}/packaging/superfluid.service.in\" \"\${_unit}\" @ONLY)
")

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME superfluid)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Local LLM serving layer: priority per tick, a journal of every token, a shared prefix cache")
set(CPACK_PACKAGE_CONTACT "Superfluid maintainers <maintainers@superfluid.invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_INSTALL_PREFIX /usr)  # the prefix CPACK_SET_DESTDIR installs under
# DESTDIR staging keeps CMAKE_INSTALL_PREFIX=/usr during the package's install, so the unit's
# ExecStart says /usr/bin/superfluid, not the staging directory.
set(CPACK_SET_DESTDIR ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # superfluid_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_STRIP_FILES ON)
include(CPack)
