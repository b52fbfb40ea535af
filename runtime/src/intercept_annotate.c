/* ThreadSanitizer's dynamic annotations of happens-before, with TSan's names and signatures
 * (the API of dynamic_annotations.h that Abseil, Chromium and folly declare, and that programs
 * call through weak references when a sanitizer may be linked): code annotated for TSan is
 * understood by pyrsan too. They tell the sanitizer about synchronisation it cannot see, inside
 * an uninstrumented library (the grace period of liburcu's synchronize_rcu or libck's
 * ck_epoch_synchronize) or through the kernel.
 *
 *   AnnotateHappensBefore(file, line, addr)  a release on addr that joins the releases
 *                                            annotated there before (TSan's is a join too)
 *   AnnotateHappensAfter(file, line, addr)   an acquire of every release annotated on addr
 *
 * Modelled as the interceptors model sync primitives (acq_rel / acquire load on the address,
 * checks off there): they only add happens-before edges, so they can hide a report, never
 * make one. file and line are TSan's and are not used. */
#include "intercept_internal.h"

void AnnotateHappensBefore(const char *file, int line, const volatile void *addr) {
  (void)file;
  (void)line;
  rsan_icpt_acq_rel((const void *)addr);
}

void AnnotateHappensAfter(const char *file, int line, const volatile void *addr) {
  (void)file;
  (void)line;
  rsan_icpt_acquire_load((const void *)addr);
}
