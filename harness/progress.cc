#include "harness/progress.h"

#include <unistd.h>

#include <fmt/format.h>

namespace xackly {

std::string WallDurationText(double seconds) {
  long s = seconds < 0 ? 0 : static_cast<long>(seconds + 0.5);
  if (s < 60) return fmt::format("{} s", s);
  if (s < 3600) return fmt::format("{} min {:02} s", s / 60, s % 60);
  return fmt::format("{} h {:02} min", s / 3600, s % 3600 / 60);
}

Progress::Progress(std::FILE* out, bool tty, bool quiet) : out_(out), tty_(tty), quiet_(quiet) {}

Progress::~Progress() { End(); }

bool Progress::IsTty(std::FILE* f) { return ::isatty(::fileno(f)) == 1; }

void Progress::Begin(const std::string& label, int total, const std::string& unit) {
  End();
  label_ = label;
  unit_ = unit;
  total_ = total;
  last_quarter_ = -1;
  last_phase_.clear();
  last_line_.clear();
  last_printed_ = true;
  started_ = last_draw_ = std::chrono::steady_clock::now();
}

void Progress::Update(int done, int found, const std::string& phase, const std::string& detail, int unjudged) {
  if (quiet_) return;
  auto now = std::chrono::steady_clock::now();
  double elapsed = std::chrono::duration<double>(now - started_).count();
  double rate = elapsed > 0 ? done / elapsed : 0;
  std::string extra = phase.empty() ? "" : ", " + phase + (detail.empty() ? "" : " (" + detail + ")");
  std::string counts = fmt::format("{}/{} {}, {} violation{}", done, total_, unit_, found, found == 1 ? "" : "s");
  if (unjudged > 0) counts += fmt::format(", {} stopped at a harness limit", unjudged);
  // Time left from the rate so far; while shrinking, the cases are done and
  // shrinking takes what it takes, so no estimate.
  std::string timing = fmt::format("{} elapsed", WallDurationText(elapsed));
  if (phase.empty() && done > 0 && done < total_) timing += fmt::format(", about {} left", WallDurationText((total_ - done) / rate));
  if (tty_) {
    // Redraw at most 20 times a second.
    if (drawn_ && now - last_draw_ < std::chrono::milliseconds(50) && done < total_) return;
    last_draw_ = now;
    constexpr int kWidth = 24;
    int filled = total_ > 0 ? std::min(kWidth, done * kWidth / total_) : 0;
    std::string bar(static_cast<size_t>(filled), '#');
    bar.resize(kWidth, '.');
    fmt::print(out_, "\r\033[2K{:<22} [{}] {}, {:.0f} cases/s, {}{}", label_, bar, counts, rate, timing, extra);
    std::fflush(out_);
    drawn_ = true;
    return;
  }
  last_line_ = fmt::format("{}: {}, {}{}\n", label_, counts, timing, extra);
  last_printed_ = false;
  int quarter = total_ > 0 ? done * 4 / total_ : 4;
  if (quarter == last_quarter_ && phase == last_phase_) return;
  last_quarter_ = quarter;
  last_phase_ = phase;
  fmt::print(out_, "{}", last_line_);
  last_printed_ = true;
  std::fflush(out_);
}

void Progress::End() {
  if (drawn_ && tty_ && !quiet_) {
    fmt::print(out_, "\r\033[2K");
    std::fflush(out_);
  }
  if (!tty_ && !quiet_ && !last_printed_) {
    fmt::print(out_, "{}", last_line_);
    std::fflush(out_);
  }
  last_printed_ = true;
  drawn_ = false;
}

}  // namespace xackly
