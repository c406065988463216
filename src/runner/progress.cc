#include "runner/progress.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "util/strings.h"

namespace nf {

ProgressLine::ProgressLine(std::string label, std::string unit, int64_t planned, int64_t already_done,
                           int64_t to_run, Clock& clock, std::function<ProgressCounts()> counts)
    : label_(std::move(label)),
      unit_(std::move(unit)),
      planned_(planned),
      already_done_(already_done),
      to_run_(to_run),
      clock_(clock),
      counts_(std::move(counts)),
      t0_(clock.now_s()),
      tty_(isatty(fileno(stderr)) != 0) {
  thread_ = std::thread([this] {
    double last_print = -1e9;
    while (true) {
      const bool finished = done_.load();
      const double now = clock_.now_s();
      if (finished || now - last_print >= (tty_ ? 0.5 : 5.0)) {
        last_print = now;
        print(now);
      }
      if (finished) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (tty_) std::fputc('\n', stderr);
  });
}

ProgressLine::~ProgressLine() { stop(); }

void ProgressLine::stop() {
  done_ = true;
  if (thread_.joinable()) thread_.join();
}

void ProgressLine::print(double now) {
  const ProgressCounts c = counts_();
  const double elapsed = now - t0_;
  const double rate = elapsed > 0 ? static_cast<double>(c.executed) / elapsed : 0.0;
  const double eta = rate > 0 ? static_cast<double>(to_run_ - c.executed) / rate : NAN;
  const int64_t done = already_done_ + c.executed;
  const double pct = planned_ > 0 ? 100.0 * static_cast<double>(done) / static_cast<double>(planned_) : 100.0;
  // Below 1 per second a rate of "0.0 draws/s" says nothing: print seconds per draw instead
  // ("20.4 s/draw"; the unit's singular is the unit without its final 's').
  const std::string singular = unit_.size() > 1 && unit_.back() == 's' ? unit_.substr(0, unit_.size() - 1) : unit_;
  const std::string speed = c.executed > 0 && rate < 1.0 ? fmt::format("{:.1f} s/{}", 1.0 / rate, singular)
                                                         : fmt::format("{:.1f} {}/s", rate, unit_);
  std::fprintf(stderr, "%s%s: %lld/%lld %s (%.1f%%) | %s | ETA %s | parse_error %lld | api_error %lld%s",
               tty_ ? "\r" : "", label_.c_str(), static_cast<long long>(done), static_cast<long long>(planned_),
               unit_.c_str(), pct, speed.c_str(), format_duration(eta).c_str(),
               static_cast<long long>(c.parse_error), static_cast<long long>(c.api_error), tty_ ? "   " : "\n");
  std::fflush(stderr);
}

}  // namespace nf
