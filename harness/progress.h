// Progress of a long run on the terminal. On a TTY: one line redrawn in
// place (cases done, violations found, rate, elapsed time and an estimate
// of the time left); elsewhere: no redrawing and no control characters,
// only occasional plain lines, the last of which (written by End) is the
// final state. With --quiet: nothing.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace xackly {

// A wall-clock span as the progress line shows it, rounded to the nearest
// second: "4 s" under a minute, "2 min 05 s" under an hour, "1 h 02 min"
// from an hour on. A negative span reads "0 s".
std::string WallDurationText(double seconds);

class Progress {
 public:
  // Writes to `out` (usually stderr). `tty`: redraw in place. `quiet`: say
  // nothing at all.
  Progress(std::FILE* out, bool tty, bool quiet);
  ~Progress();

  // A new task, e.g. "no-dedupe", with `total` units of work, counted as
  // `unit` ("cases" of one check; "checks" of several run at once).
  void Begin(const std::string& label, int total, const std::string& unit = "cases");
  // `done` of `total` finished, `found` violations so far. `phase` names
  // what is happening ("shrinking"; empty while searching) and `detail`
  // says more ("3 smaller cases kept"). `unjudged` of the done ones were
  // stopped at a harness limit: shown as soon as there is one, so a user
  // waiting on a slow search knows why before its verdict says undecided.
  // Plain output prints a line at every quarter of the work and at every
  // change of phase.
  void Update(int done, int found, const std::string& phase = "", const std::string& detail = "",
              int unjudged = 0);
  // Clears the in-place line (TTY) so the caller can print a result line;
  // elsewhere prints the last state when the last plain line was older.
  void End();

  static bool IsTty(std::FILE* f);

 private:
  std::FILE* out_;
  bool tty_;
  bool quiet_;
  std::string label_;
  std::string unit_ = "cases";
  int total_ = 0;
  int last_quarter_ = -1;
  std::string last_phase_;
  bool drawn_ = false;
  std::string last_line_;     // the latest state, as a plain line
  bool last_printed_ = true;  // whether last_line_ was printed
  std::chrono::steady_clock::time_point started_;
  std::chrono::steady_clock::time_point last_draw_;
};

}  // namespace xackly
