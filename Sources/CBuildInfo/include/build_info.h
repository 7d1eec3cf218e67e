#ifndef NOTIFYD_BUILD_INFO_H
#define NOTIFYD_BUILD_INFO_H

/// Which build this is, beside the version: the package revision and the git commit it
/// was built from, as Package.swift found them ("" when it found neither).
const char *notifyd_build(void);

#endif
