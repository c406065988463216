// The floor of the HTTP library alone (issue 14 item 5): libcurl's multi interface posting
// one fixed request body again and again on kept-alive connections, the reply read and
// thrown away. No JSON built or parsed, nothing stored, no retry logic: what any client
// built on libcurl pays per request before it does anything of its own. `run_vs_wrk.py
// --curl-floor` runs it against the same serve-sim and body as wrk and `noisefloor run`.
//
//   build/ci/bench/curl_floor_bench --url http://127.0.0.1:PORT/v1/chat/completions
//       --body FILE [--requests 20000] [--concurrency 16] [--threads 2] [--api poll|socket]
//
// `--threads` event-loop threads (as `run`'s RunOptions::event_loops) each drive
// concurrency / threads transfers. `--api poll` (default): curl_multi_perform +
// curl_multi_poll, the calls src/backend/http.cc's loop makes; `--api socket`:
// curl_multi_socket_action driven by the thread's own epoll (libcurl's interface for
// many transfers: it acts only on the sockets that are ready). Prints requests/s and the process's CPU per
// request (getrusage, user + system, whole process: start-up is a few ms). Exits 1 if
// any reply is not HTTP 200 or a transfer fails.
#include <curl/curl.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

namespace {

size_t discard(char*, size_t size, size_t n, void* counter) {
  *static_cast<size_t*>(counter) += size * n;
  return size * n;
}

double cpu_s() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

struct Loop {
  const std::string* url = nullptr;
  const std::string* body = nullptr;
  int transfers = 1;
  std::atomic<long>* remaining = nullptr;  // requests not yet started, shared by the loops
  long done = 0;
  long failed = 0;
  size_t bytes = 0;
  bool socket_api = false;

  // libcurl's socket callback: keep the thread's epoll set equal to what it asks for.
  static int on_socket(CURL*, curl_socket_t s, int what, void* loop, void* known) {
    Loop* self = static_cast<Loop*>(loop);
    if (what == CURL_POLL_REMOVE) {
      epoll_ctl(self->ep, EPOLL_CTL_DEL, s, nullptr);
      curl_multi_assign(self->multi, s, nullptr);
      return 0;
    }
    epoll_event ev{};
    ev.events = (what & CURL_POLL_IN ? EPOLLIN : 0u) | (what & CURL_POLL_OUT ? EPOLLOUT : 0u);
    ev.data.fd = s;
    if (known == nullptr) {
      epoll_ctl(self->ep, EPOLL_CTL_ADD, s, &ev);
      curl_multi_assign(self->multi, s, self);  // any non-null marks the socket as added
    } else {
      epoll_ctl(self->ep, EPOLL_CTL_MOD, s, &ev);
    }
    return 0;
  }
  static int on_timer(CURLM*, long timeout_ms, void* loop) {
    static_cast<Loop*>(loop)->timeout_ms = timeout_ms;
    return 0;
  }
  int ep = -1;
  CURLM* multi = nullptr;
  long timeout_ms = -1;

  void run() {
    if (socket_api) return run_socket();
    run_poll();
  }

  CURL* make_easy(curl_slist* headers) {
    CURL* e = curl_easy_init();
    curl_easy_setopt(e, CURLOPT_URL, url->c_str());
    curl_easy_setopt(e, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(e, CURLOPT_POSTFIELDS, body->data());
    curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE, static_cast<long>(body->size()));
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, &discard);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, &bytes);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_TCP_NODELAY, 1L);
    return e;
  }

  // Makes the loop's easy handles and starts a request on each while requests remain;
  // returns how many were started.
  int start_transfers(curl_slist* headers, std::vector<CURL*>& easies) {
    int started = 0;
    for (int i = 0; i < transfers; ++i) {
      easies.push_back(make_easy(headers));
      if (remaining->fetch_sub(1) > 0) {
        curl_multi_add_handle(multi, easies.back());
        ++started;
      }
    }
    return started;
  }

  // Counts finished transfers and starts the next request on each freed handle; returns
  // how many were started.
  int reap() {
    int started = 0, queued = 0;
    while (CURLMsg* m = curl_multi_info_read(multi, &queued)) {
      if (m->msg != CURLMSG_DONE) continue;
      CURL* e = m->easy_handle;
      long code = 0;
      curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
      if (m->data.result != CURLE_OK || code != 200) ++failed;
      ++done;
      curl_multi_remove_handle(multi, e);
      if (remaining->fetch_sub(1) > 0) {
        curl_multi_add_handle(multi, e);  // the connection stays in the multi's pool
        ++started;
      }
    }
    return started;
  }

  void run_socket() {
    multi = curl_multi_init();
    ep = epoll_create1(EPOLL_CLOEXEC);
    curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, &Loop::on_socket);
    curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, &Loop::on_timer);
    curl_multi_setopt(multi, CURLMOPT_TIMERDATA, this);
    curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
    std::vector<CURL*> easies;
    int running = start_transfers(headers, easies);
    // The loop's own count of transfers in flight decides when it is done (libcurl's
    // running count is only updated by the next socket_action after a handle is added).
    long active = running;
    epoll_event events[64];
    while (active > 0) {
      const int n = epoll_wait(ep, events, 64, timeout_ms < 0 ? 1000 : static_cast<int>(timeout_ms));
      if (n <= 0) {
        curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
      } else {
        for (int i = 0; i < n; ++i) {
          const int flags = (events[i].events & EPOLLIN ? CURL_CSELECT_IN : 0) |
                            (events[i].events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
                            (events[i].events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
          curl_multi_socket_action(multi, events[i].data.fd, flags, &running);
        }
      }
      const long before = done;
      const int started = reap();
      active += started - (done - before);
      if (started > 0) curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
    }
    for (CURL* e : easies) curl_easy_cleanup(e);
    curl_slist_free_all(headers);
    curl_multi_cleanup(multi);
    close(ep);
  }

  void run_poll() {
    multi = curl_multi_init();
    curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
    std::vector<CURL*> easies;
    int running = start_transfers(headers, easies);
    while (running > 0) {
      curl_multi_perform(multi, &running);
      running += reap();
      if (running > 0) curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
    }
    for (CURL* e : easies) curl_easy_cleanup(e);
    curl_slist_free_all(headers);
    curl_multi_cleanup(multi);
  }
};

}  // namespace

int main(int argc, char** argv) {
  std::string url, body_path;
  long requests = 20000;
  int concurrency = 16, threads = 2;
  std::string api = "poll";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--url") url = argv[i + 1];
    else if (a == "--body") body_path = argv[i + 1];
    else if (a == "--requests") requests = std::atol(argv[i + 1]);
    else if (a == "--concurrency") concurrency = std::atoi(argv[i + 1]);
    else if (a == "--threads") threads = std::atoi(argv[i + 1]);
    else if (a == "--api") api = argv[i + 1];
    else {
      std::fprintf(stderr, "curl_floor_bench: unknown option %s\n", a.c_str());
      return 2;
    }
  }
  std::ifstream in(body_path, std::ios::binary);
  const std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (url.empty() || body.empty() || requests < 1 || threads < 1 || concurrency < threads ||
      (api != "poll" && api != "socket")) {
    std::fprintf(stderr,
                 "usage: curl_floor_bench --url URL --body FILE (non-empty) [--requests N] [--concurrency C] "
                 "[--threads T <= C] [--api poll|socket]\n");
    return 2;
  }
  curl_global_init(CURL_GLOBAL_DEFAULT);
  std::atomic<long> remaining{requests};
  std::vector<Loop> loops(static_cast<size_t>(threads));
  for (int t = 0; t < threads; ++t) {
    loops[t].url = &url;
    loops[t].body = &body;
    loops[t].transfers = concurrency / threads + (t < concurrency % threads ? 1 : 0);
    loops[t].remaining = &remaining;
    loops[t].socket_api = api == "socket";
  }
  const double cpu0 = cpu_s();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (Loop& l : loops) pool.emplace_back([&l] { l.run(); });
  for (std::thread& t : pool) t.join();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double cpu = cpu_s() - cpu0;
  long done = 0, failed = 0;
  for (const Loop& l : loops) {
    done += l.done;
    failed += l.failed;
  }
  curl_global_cleanup();
  std::printf("curl_floor (%s): %ld requests in %.3f s = %.0f requests/s, %.1f us CPU per request, %ld failed\n", api.c_str(), done,
              wall, done / wall, cpu / std::max(1L, done) * 1e6, failed);
  return failed == 0 && done == requests ? 0 : 1;
}
