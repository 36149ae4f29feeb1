/*
 * version -- which build this is.
 *
 * croupier_version is the `git describe --always --dirty` of the source tree when the binary
 * was built (meson's vcs_tag, common/meson.build: regenerated on every build, rewritten only
 * when it changes). A tree without git history (the container build, docs/deploy.md "The
 * image") gets meson's `-Dbuild_version=` instead, and "unknown" when that is empty too.
 *
 * Every installed binary prints it for --version (config_parse does it for programs that set
 * config_program_version, common/config.h), and croupier-game publishes it in its registry
 * entry ("version", lease/registry.h) so that a rollout can be followed version by version.
 */
#ifndef CROUPIER_VERSION_H
#define CROUPIER_VERSION_H

extern const char croupier_version[];

#endif
