#include "backend/http.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <cctype>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>

#include <curl/curl.h>
#include <fmt/format.h>

namespace nf {

namespace {

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct SlistDeleter {
  void operator()(curl_slist* s) const { curl_slist_free_all(s); }
};

size_t write_body(char* ptr, size_t size, size_t nmemb, void* userdata) {
  static_cast<std::string*>(userdata)->append(ptr, size * nmemb);
  return size * nmemb;
}

// The headers kept from a reply: those provenance_headers() keeps (which include
// retry-after and date, needed by the retry policy). Everything else is dropped in the
// header callback without allocating (profile: bench/README.md).
bool keep_header(std::string_view name) {
  if (name == "set-cookie" || name == "authorization" || name == "x-api-key") return false;
  auto starts = [&](std::string_view p) { return name.substr(0, p.size()) == p; };
  return name == "server" || name == "date" || name == "x-request-id" || name == "request-id" ||
         name == "retry-after" || starts("openai-") || starts("x-ratelimit-") || starts("anthropic-") ||
         name.find("model") != std::string_view::npos || name.find("fingerprint") != std::string_view::npos;
}

size_t write_header(char* ptr, size_t size, size_t nmemb, void* userdata) {
  auto* reply = static_cast<HttpReply*>(userdata);
  const size_t n = size * nmemb;
  const std::string_view line(ptr, n);
  if (line.substr(0, 5) == "HTTP/") {
    reply->headers.clear();  // a new response (after 100-continue or a redirect)
    return n;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return n;
  std::string name(line.substr(0, colon));  // header names are short: no allocation (SSO)
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  if (!keep_header(name)) return n;
  size_t b = colon + 1, e = line.size();
  while (b < e && (line[b] == ' ' || line[b] == '\t')) ++b;
  while (e > b && (line[e - 1] == '\r' || line[e - 1] == '\n' || line[e - 1] == ' ')) --e;
  reply->headers[std::move(name)] = std::string(line.substr(b, e - b));
  return n;
}

// libcurl's progress callback on the thread path: a non-zero return cuts the transfer
// (CURLE_ABORTED_BY_CALLBACK) once the abandon flag is set. libcurl calls it at least
// about once a second while a transfer waits.
int abandon_progress(void* clientp, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  return static_cast<const std::atomic<bool>*>(clientp)->load() ? 1 : 0;
}

// The options that never change for a handle (http_post's kept-alive handles and the
// event loop's pooled ones): set once when the handle is made.
void set_fixed_options(CURL* c) {
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_POST, 1L);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, write_body);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, write_header);
  curl_easy_setopt(c, CURLOPT_PROXY, "");
  curl_easy_setopt(c, CURLOPT_TCP_NODELAY, 1L);
}

}  // namespace

CurlHandlePool::~CurlHandlePool() {
  for (auto& [id, h] : handles_) curl_easy_cleanup(static_cast<CURL*>(h));
}

void* CurlHandlePool::for_this_thread() { return for_this_thread(nullptr); }

void* CurlHandlePool::for_this_thread(bool* fresh) {
  global_init_once();
  std::lock_guard<std::mutex> lock(mu_);
  void*& h = handles_[std::this_thread::get_id()];
  if (fresh) *fresh = h == nullptr;
  if (h == nullptr) h = curl_easy_init();
  return h;
}

HttpReply http_post(CurlHandlePool& pool, const std::string& url, const std::vector<std::string>& headers, const std::string& payload,
                    double timeout_s, double connect_timeout_s, const std::atomic<bool>* abandon) {
  HttpReply a;
  bool fresh = false;
  CURL* c = static_cast<CURL*>(pool.for_this_thread(&fresh));
  if (c == nullptr) {
    a.transport_error = true;
    a.curl_error = "curl_easy_init failed";
    return a;
  }
  curl_slist* raw = nullptr;
  for (const auto& h : headers) raw = curl_slist_append(raw, h.c_str());
  std::unique_ptr<curl_slist, SlistDeleter> list(raw);
  char errbuf[CURL_ERROR_SIZE] = {0};
  if (fresh) {  // options that never change for a handle: set once
    set_fixed_options(c);
  }
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_POSTFIELDS, payload.data());
  curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(payload.size()));
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list.get());
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, static_cast<long>(timeout_s * 1000.0));
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(connect_timeout_s * 1000.0));
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &a.body);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &a);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
  if (abandon) {
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, abandon_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, const_cast<std::atomic<bool>*>(abandon));
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
  } else {
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 1L);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const CURLcode rc = curl_easy_perform(c);
  a.latency_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  // The handle outlives this call: drop pointers to locals.
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, nullptr);
  curl_easy_setopt(c, CURLOPT_ERRORBUFFER, nullptr);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, nullptr);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, nullptr);
  if (rc != CURLE_OK) {
    a.transport_error = true;
    a.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
    a.abandoned = rc == CURLE_ABORTED_BY_CALLBACK;
    a.curl_error = errbuf[0] != '\0' ? std::string(errbuf) : std::string(curl_easy_strerror(rc));
    long code = 0;  // the status line's code if one arrived before the error, else 0
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
    a.responded = code > 0 || !a.body.empty();
    a.http = 0;
    return a;
  }
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &a.http);
  return a;
}

std::string redact_secret(std::string text, const std::string& secret) {
  if (secret.empty()) return text;
  size_t pos = 0;
  while ((pos = text.find(secret, pos)) != std::string::npos) {
    text.replace(pos, secret.size(), "[redacted]");
    pos += 10;
  }
  return text;
}

std::map<std::string, std::string> provenance_headers(const std::map<std::string, std::string>& headers) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : headers)
    if (keep_header(name)) out[name] = value;
  return out;
}

namespace {

// A 429 whose Retry-After parses (seconds or HTTP-date) pauses the whole endpoint for
// that long (0 = no pause; beyond the cap the draw gives up and nobody is paused).
std::optional<double> endpoint_pause_s(const ChatEndpoint& ep, Clock& clock, const HttpReply& reply) {
  const auto ra = reply.headers.find("retry-after");
  if (ra == reply.headers.end()) return std::nullopt;
  const auto date = reply.headers.find("date");
  auto wait = parse_retry_after(ra->second, date == reply.headers.end() ? std::string() : date->second,
                                clock.unix_time_s());
  if (wait && *wait > ep.policy.retry_after_cap_s) return 0.0;
  return wait;
}

}  // namespace

RetryPolicy chat_call_policy(const ChatEndpoint& ep) {
  RetryPolicy policy = ep.policy;
  if (ep.health && ep.health->fail_fast()) policy.max_retries = 0;
  return policy;
}

AttemptResult chat_attempt_done(const ChatEndpoint& ep, const ChatBodyParser& parse,
                                const RateLimiter::Permit& permit, HttpReply reply, ChatCallState& st) {
  Clock& clock = ep.clock ? *ep.clock : real_clock();
  st.last = std::move(reply);
  const HttpReply& last = st.last;
  if (ep.limiter) {
    const bool ok2xx = !last.transport_error && last.http >= 200 && last.http < 300;
    RateLimiter::Outcome outcome = ok2xx ? RateLimiter::Outcome::kSuccess : RateLimiter::Outcome::kOther;
    double pause_s = 0.0;
    if (last.http == 429) {
      const std::optional<double> pause = endpoint_pause_s(ep, clock, last);
      outcome = pause ? RateLimiter::Outcome::kThrottledPause : RateLimiter::Outcome::kThrottled;
      pause_s = pause.value_or(0.0);
    }
    // The shared "not before" is set with the release, before any other worker can
    // take the freed slot.
    ep.limiter->release(permit, outcome, pause_s);
  }
  if ((!last.transport_error || last.responded) && ep.health) {
    ep.health->answered = true;
    ep.health->last_reply_s = clock.now_s();
  }
  AttemptResult a;
  a.transport_error = last.transport_error;
  a.http = last.http;
  if (auto it = last.headers.find("retry-after"); it != last.headers.end()) a.retry_after = it->second;
  if (auto it = last.headers.find("date"); it != last.headers.end()) a.date = it->second;
  // Silent (EndpointHealth): the whole timeout_s spent (not a connect timeout) with no
  // HTTP response from the endpoint since this attempt started.
  const double waited_s = last.latency_ms / 1000.0;
  st.silent = last.timed_out && !last.responded && ep.health && waited_s >= 0.9 * ep.timeout_s &&
              ep.health->last_reply_s.load() < clock.now_s() - waited_s;
  a.no_retry = st.silent;
  st.parsed_ok = false;
  if (!a.transport_error && a.http >= 200 && a.http < 300) {
    st.parsed = ChatResponse();
    st.parsed_ok = parse(last.body, st.parsed);
    a.malformed_body = !st.parsed_ok;
  }
  return a;
}

ChatResponse chat_call_result(const ChatEndpoint& ep, ChatCallState& st, const RetryDecision& d, int max_tokens) {
  HttpReply& last = st.last;
  if (ep.health) {
    if (last.transport_error && !ep.health->answered.load()) ep.health->dead_calls.fetch_add(1);
  }
  const bool parsed_ok = st.parsed_ok;
  const std::string malformed_why = parsed_ok ? std::string() : st.parsed.error;  // the parser's reason, if any
  ChatResponse r = parsed_ok ? std::move(st.parsed) : ChatResponse();
  const int attempts = st.attempts;
  r.attempts = attempts;
  r.latency_ms = last.latency_ms;
  r.http_status = static_cast<int>(last.http);
  r.transport_error = last.transport_error;
  r.endpoint_silent = st.silent;
  r.raw_body = redact_secret(std::move(last.body), ep.secret);
  r.headers = provenance_headers(last.headers);
  for (auto& [name, value] : r.headers) value = redact_secret(value, ep.secret);
  const std::string tries = fmt::format(" ({} attempt{})", attempts, attempts == 1 ? "" : "s");
  if (ep.limiter && parsed_ok) {
    const double used = r.prompt_tokens >= 0 && r.completion_tokens >= 0
                            ? static_cast<double>(r.prompt_tokens + r.completion_tokens)
                            : static_cast<double>(max_tokens);
    ep.limiter->after_reply(used);
  }
  if (last.transport_error) {
    r.kind = ResponseKind::kApiError;
    // "timeout:" for curl's error 28 (the connect or the wait for the reply ran out), so a
    // server that stalled mid-reply is not reported as a connect failure; "connect:" for the
    // other transport errors (refused, reset, DNS).
    r.error = redact_secret((last.timed_out ? "timeout: " : "connect: ") + last.curl_error + tries, ep.secret);
    if (last.timed_out && last.responded)  // tester finding 11 (session 9): slow, not hung
      r.error += fmt::format("; the server was still sending its reply when timeout_s ({} s) ran out: raise timeout_s",
                             ep.timeout_s);
    if (st.silent)
      r.error += fmt::format("; no HTTP response from the server to any call for {} s (timeout_s): not retried "
                             "further",
                             ep.timeout_s);
    return r;
  }
  if (last.http < 200 || last.http >= 300) {
    r.kind = ResponseKind::kApiError;
    std::string head = r.raw_body.substr(0, 200);
    r.error = fmt::format("HTTP {}: {}{}", last.http, head, tries);
    if (d.action == RetryDecision::Action::kGiveUp && d.reason.find("cap") != std::string::npos)
      r.error = fmt::format("HTTP {}: {}{}", last.http, d.reason, tries);
    r.error = redact_secret(r.error, ep.secret);
    return r;
  }
  if (!parsed_ok) {
    r.kind = ResponseKind::kApiError;
    r.content.clear();
    r.error = "malformed response body" + (malformed_why.empty() ? std::string() : ": " + malformed_why) + tries;
    return r;
  }
  return r;
}

namespace {

bool abandoned(const ChatEndpoint& ep) { return ep.abandon != nullptr && ep.abandon->load(); }

// The response of a call cut by ChatEndpoint::abandon after `attempts` attempts.
ChatResponse abandoned_response(int attempts) {
  ChatResponse r;
  r.kind = ResponseKind::kApiError;
  r.abandoned = true;
  r.transport_error = true;
  r.attempts = attempts;
  r.error = "abandoned: the run was stopped while this call was in flight";
  return r;
}

// clock.sleep_s(wait_s), in slices of at most 50 ms while the endpoint can be abandoned;
// false when it was abandoned meanwhile.
bool wait_unless_abandoned(const ChatEndpoint& ep, Clock& clock, double wait_s) {
  if (ep.abandon == nullptr) {
    clock.sleep_s(wait_s);
    return true;
  }
  const double until = clock.now_s() + wait_s;
  for (double left = wait_s; left > 0; left = until - clock.now_s()) {
    if (abandoned(ep)) return false;
    clock.sleep_s(std::min(0.05, left));
  }
  return !abandoned(ep);
}

}  // namespace

ChatResponse post_chat(const ChatEndpoint& ep, const std::string& payload, const ChatBodyParser& parse, Rng& rng,
                       int max_tokens) {
  Clock& clock = ep.clock ? *ep.clock : real_clock();
  ChatCallState st;
  const RetryPolicy policy = chat_call_policy(ep);
  // run_with_retries (retry.h), with the abandon flag checked before each attempt and
  // during each wait. The endpoint-wide pause after a 429 is set in release() (in
  // chat_attempt_done); a 429 without a usable Retry-After only cuts the in-flight limit
  // while this worker backs off on its own.
  for (int attempt = 1;; ++attempt) {
    if (abandoned(ep)) return abandoned_response(attempt - 1);
    RateLimiter::Permit permit;
    if (ep.limiter) permit = ep.limiter->admit();
    if (abandoned(ep)) {
      if (ep.limiter) ep.limiter->release(permit, RateLimiter::Outcome::kOther);
      return abandoned_response(attempt - 1);
    }
    HttpReply reply = http_post(*ep.pool, ep.url, ep.headers, payload, ep.timeout_s, ep.connect_timeout_s, ep.abandon);
    if (reply.abandoned) {
      if (ep.limiter) ep.limiter->release(permit, RateLimiter::Outcome::kOther);
      return abandoned_response(attempt);
    }
    const AttemptResult a = chat_attempt_done(ep, parse, permit, std::move(reply), st);
    const RetryDecision d = decide_retry(policy, attempt, a, clock.unix_time_s(), rng.uniform());
    if (d.action != RetryDecision::Action::kRetry) {
      st.attempts = attempt;
      return chat_call_result(ep, st, d, max_tokens);
    }
    if (!wait_unless_abandoned(ep, clock, d.wait_s)) return abandoned_response(attempt);
  }
}

struct ChatMulti::Call {
  AsyncChatCall call;
  Done done;
  RetryPolicy policy;
  ChatCallState st;
  int attempt = 0;                // attempts started
  RateLimiter::Permit permit;
  HttpReply reply;                // the attempt in transfer
  CURL* easy = nullptr;           // while transferring
  double due = 0.0;               // waiting: when to try admission (clock.now_s())
  char errbuf[CURL_ERROR_SIZE] = {0};
  Clock& clock() const { return call.endpoint->clock ? *call.endpoint->clock : real_clock(); }
};

ChatMulti::ChatMulti() {
  global_init_once();
  multi_ = curl_multi_init();
}

ChatMulti::~ChatMulti() {
  CURLM* m = static_cast<CURLM*>(multi_);
  for (auto& c : calls_) {
    if (c->easy != nullptr) {
      curl_multi_remove_handle(m, c->easy);
      curl_easy_cleanup(c->easy);
      // An abandoned attempt frees its slot so the endpoint's limiter stays consistent.
      if (c->call.endpoint->limiter) c->call.endpoint->limiter->release(c->permit, RateLimiter::Outcome::kOther);
    }
  }
  for (void* e : idle_) curl_easy_cleanup(static_cast<CURL*>(e));
  for (auto& [ep, list] : header_lists_) curl_slist_free_all(static_cast<curl_slist*>(list));
  curl_multi_cleanup(m);
}

size_t ChatMulti::active() const { return calls_.size(); }

void ChatMulti::start(AsyncChatCall call, Done done) {
  auto c = std::make_unique<Call>();
  c->policy = chat_call_policy(*call.endpoint);
  c->call = std::move(call);
  c->done = std::move(done);
  c->due = 0.0;  // admission on the next poll
  calls_.push_back(std::move(c));
}

void ChatMulti::launch(Call& c) {
  const ChatEndpoint& ep = *c.call.endpoint;
  CURL* e = nullptr;
  if (!idle_.empty()) {
    e = static_cast<CURL*>(idle_.back());
    idle_.pop_back();
  } else {
    e = curl_easy_init();
    if (e == nullptr) {  // as http_post: a transport error of this attempt
      c.reply = HttpReply();
      c.reply.transport_error = true;
      c.reply.curl_error = "curl_easy_init failed";
      c.easy = nullptr;
      return;
    }
    set_fixed_options(e);
  }
  void*& list = header_lists_[&ep];
  if (list == nullptr) {
    curl_slist* raw = nullptr;
    for (const auto& h : ep.headers) raw = curl_slist_append(raw, h.c_str());
    list = raw;
  }
  c.reply = HttpReply();
  c.errbuf[0] = '\0';
  ++c.attempt;
  curl_easy_setopt(e, CURLOPT_URL, ep.url.c_str());
  curl_easy_setopt(e, CURLOPT_POSTFIELDS, c.call.payload.data());
  curl_easy_setopt(e, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(c.call.payload.size()));
  curl_easy_setopt(e, CURLOPT_HTTPHEADER, static_cast<curl_slist*>(list));
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS, static_cast<long>(ep.timeout_s * 1000.0));
  curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(ep.connect_timeout_s * 1000.0));
  curl_easy_setopt(e, CURLOPT_WRITEDATA, &c.reply.body);
  curl_easy_setopt(e, CURLOPT_HEADERDATA, &c.reply);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, c.errbuf);
  curl_easy_setopt(e, CURLOPT_PRIVATE, static_cast<void*>(&c));
  c.easy = e;
  curl_multi_add_handle(static_cast<CURLM*>(multi_), e);
}

void ChatMulti::poll(double max_wait_s) {
  CURLM* m = static_cast<CURLM*>(multi_);
  std::vector<std::pair<Done, ChatResponse>> finished;
  // One attempt ended (the reply in c.reply): the retry policy decides, as
  // run_with_retries does in post_chat (one jitter draw per decision).
  auto attempt_ended = [&](Call& c) -> bool {  // true = the call is done
    Clock& clock = c.clock();
    const ChatEndpoint& ep = *c.call.endpoint;
    const AttemptResult a = chat_attempt_done(ep, c.call.parse, c.permit, std::move(c.reply), c.st);
    const RetryDecision d = decide_retry(c.policy, c.attempt, a, clock.unix_time_s(), c.call.rng.uniform());
    if (d.action == RetryDecision::Action::kRetry) {
      c.due = clock.now_s() + d.wait_s;
      return false;
    }
    c.st.attempts = c.attempt;
    finished.emplace_back(std::move(c.done), chat_call_result(ep, c.st, d, c.call.max_tokens));
    return true;
  };
  auto remove_done = [&](const std::vector<Call*>& done) {
    if (done.empty()) return;
    calls_.erase(std::remove_if(calls_.begin(), calls_.end(),
                                [&](const std::unique_ptr<Call>& c) {
                                  return std::find(done.begin(), done.end(), c.get()) != done.end();
                                }),
                 calls_.end());
  };
  // Admission of the calls whose wait is over; the earliest wait still running.
  auto admit_due = [&](std::vector<Call*>& done) -> double {
    double next_due = std::numeric_limits<double>::infinity();
    for (auto& cp : calls_) {
      Call& c = *cp;
      if (c.easy != nullptr) continue;
      const double now = c.clock().now_s();
      if (c.due > now) {
        next_due = std::min(next_due, c.due - now);
        continue;
      }
      RateLimiter* limiter = c.call.endpoint->limiter;
      if (limiter && !limiter->try_admit(c.permit)) {
        c.due = now + std::max(0.001, limiter->paused_for_s());
        next_due = std::min(next_due, c.due - now);
        continue;
      }
      launch(c);
      if (c.easy == nullptr && attempt_ended(c)) done.push_back(&c);  // curl_easy_init failed
    }
    return next_due;
  };
  auto drain = [&](std::vector<Call*>& done) {
    int left = 0;
    while (CURLMsg* msg = curl_multi_info_read(m, &left)) {
      if (msg->msg != CURLMSG_DONE) continue;
      CURL* e = msg->easy_handle;
      void* priv = nullptr;
      curl_easy_getinfo(e, CURLINFO_PRIVATE, &priv);
      Call& c = *static_cast<Call*>(priv);
      const CURLcode rc = msg->data.result;
      curl_off_t total_us = 0;
      curl_easy_getinfo(e, CURLINFO_TOTAL_TIME_T, &total_us);
      c.reply.latency_ms = static_cast<double>(total_us) / 1000.0;
      if (rc != CURLE_OK) {
        c.reply.transport_error = true;
        c.reply.timed_out = rc == CURLE_OPERATION_TIMEDOUT;
        c.reply.curl_error = c.errbuf[0] != '\0' ? std::string(c.errbuf) : std::string(curl_easy_strerror(rc));
        long code = 0;  // as in the blocking path: a status line that arrived before the error
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &code);
        c.reply.responded = code > 0 || !c.reply.body.empty();
        c.reply.http = 0;
      } else {
        curl_easy_getinfo(e, CURLINFO_RESPONSE_CODE, &c.reply.http);
      }
      curl_multi_remove_handle(m, e);
      curl_easy_setopt(e, CURLOPT_ERRORBUFFER, nullptr);
      curl_easy_setopt(e, CURLOPT_WRITEDATA, nullptr);
      curl_easy_setopt(e, CURLOPT_HEADERDATA, nullptr);
      curl_easy_setopt(e, CURLOPT_PRIVATE, nullptr);
      idle_.push_back(e);
      c.easy = nullptr;
      if (attempt_ended(c)) done.push_back(&c);
    }
  };

  std::vector<Call*> done;
  double next_due = admit_due(done);
  int running = 0;
  curl_multi_perform(m, &running);
  drain(done);
  if (done.empty() && !calls_.empty()) {
    const double wait_s = std::max(0.0, std::min(max_wait_s, next_due));
    curl_multi_poll(m, nullptr, 0, static_cast<int>(std::ceil(wait_s * 1000.0)), nullptr);
    curl_multi_perform(m, &running);
    drain(done);
  }
  remove_done(done);
  for (auto& [fn, resp] : finished) fn(std::move(resp));
}

}  // namespace nf
