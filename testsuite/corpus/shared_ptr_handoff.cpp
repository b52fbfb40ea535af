// robust: yes
// race: no
// reason: std::shared_ptr copies and drops across threads: libstdc++'s use count is updated by atomic RMWs (acq_rel on the last drop), the object's fields are written before the threads start
// C++: shared_ptr copied into two threads, each drops its copy; the last one deletes the object.
#include <cstdio>
#include <memory>
#include <thread>

struct Payload {
  int v[4] = {1, 2, 3, 4};
  ~Payload() { std::puts("freed"); }
};

int main() {
  auto p = std::make_shared<Payload>();
  int s1 = 0, s2 = 0;
  std::thread a([q = p, &s1] { s1 = q->v[0] + q->v[1]; });
  std::thread b([q = p, &s2] { s2 = q->v[2] + q->v[3]; });
  p.reset();
  a.join();
  b.join();
  std::printf("%d\n", s1 + s2);
  return 0;
}
