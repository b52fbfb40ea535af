#include "shared.h"
int r1;
void *t2(void *arg) {
  (void)arg;
  PUBLISH(y, 1);
  r1 = peek_inline(&x);
  return 0;
}
