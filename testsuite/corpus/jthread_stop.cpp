// options: -std=c++20
// robust: yes
// race: no
// reason: std::jthread's stop_token: request_stop and stop_requested synchronise; the loop count is read after join (in jthread's destructor)
// C++20: std::jthread loop that polls its stop_token.
#include <atomic>
#include <cstdio>
#include <thread>

int main() {
  long iterations = 0;
  {
    std::jthread t([&iterations](std::stop_token st) {
      while (!st.stop_requested() && iterations < 1000)
        iterations++;
    });
    t.request_stop();
  }
  std::printf("%s\n", iterations <= 1000 ? "ok" : "bad");
  return 0;
}
