#include "shared.h"
int r0;
void *t1(void *arg) {
  (void)arg;
  PUBLISH(x, 1);
  r0 = peek_inline(&y);
  return 0;
}
