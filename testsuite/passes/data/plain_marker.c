/* Compiled without instrumentation and linked into plain_accesses.c's test: writes a section
 * marker to stderr, the stream the stub runtime traces the plain-access hooks to
 * (RSAN_STUB_TRACE=-), so that the test can tell which hooks each section made. */
#include <stdio.h>

void mark(const char *section, const void *object, unsigned long size) {
  fprintf(stderr, "mark %s %p %lu\n", section, object, size);
}
