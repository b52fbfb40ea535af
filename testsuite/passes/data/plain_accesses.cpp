// C++ plain accesses: vectors, strings, a map, a struct copied by value, and threads that
// share results through a mutex. The output must not change under instrumentation.
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

struct Point { double x, y, z; long tag; };

static std::mutex lock;
static std::map<std::string, int> counts;
static Point origin{1.0, 2.0, 3.0, 4};

static void count_words(const std::vector<std::string> &words, int stride, int start) {
  std::map<std::string, int> local;
  for (size_t i = start; i < words.size(); i += stride) local[words[i]]++;
  std::lock_guard<std::mutex> guard(lock);
  for (const auto &kv : local) counts[kv.first] += kv.second;
}

int main() {
  std::vector<std::string> words;
  const char *text[] = {"alpha", "beta", "gamma", "delta", "alpha", "beta", "alpha"};
  for (int r = 0; r < 50; r++)
    for (const char *w : text) words.emplace_back(w);
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; t++) threads.emplace_back(count_words, std::cref(words), 3, t);
  for (auto &th : threads) th.join();
  Point p = origin;
  p.x += counts["alpha"];
  char buf[32];
  std::memcpy(buf, "copied", 7);
  std::string s(buf);
  s += "!";
  std::printf("words=%zu alpha=%d beta=%d p=%.1f,%.1f,%ld s=%s len=%zu\n", words.size(),
              counts["alpha"], counts["beta"], p.x, p.z, p.tag, s.c_str(), std::strlen(buf));
  return 0;
}
