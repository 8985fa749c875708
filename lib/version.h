/* version.h - the one place triage's version is written; the CLI prints it
 * for --version and the daemon may report it in stats. */
#ifndef TRIAGE_VERSION_H
#define TRIAGE_VERSION_H

#define TRIAGE_VERSION "0.1.0"

#endif
