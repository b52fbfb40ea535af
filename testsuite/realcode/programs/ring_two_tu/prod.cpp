#include "q.h"
Ring<int, 4> ring;
void produce(int n) { for (int i = 1; i <= n; i++) while (!ring.push(i)) { } }
