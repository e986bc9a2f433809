// Internal: the interface each output format implements, and the scanner that drives it. The
// scanner owns the pending text; a machine only sees whole markers and the plain text between
// them, so its decisions cannot depend on where the chunk boundaries fell.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace k3::text::output {

class FormatMachine {
 public:
  virtual ~FormatMachine() = default;
  // The markers recognized in the current state. All are ASCII and start with '<'; none is a
  // prefix of another. Each state returns its own static array: the scanner detects a state
  // change by the array's address. A state change made inside OnText may only narrow the set
  // (the text already handed over was scanned with the old set).
  virtual std::span<const std::string_view> Markers() const = 0;
  // Plain text that contains no full marker of the current set.
  virtual void OnText(std::string_view text) = 0;
  // One of Markers(), as the string_view from that array.
  virtual void OnMarker(std::string_view marker) = 0;
  // End of input; truncated = length cut.
  virtual void OnFinish(bool truncated) = 0;
};

// Turns byte chunks into valid UTF-8 and splits it at markers. Holds back (a) an incomplete UTF-8
// sequence at the end of the input and (b) a suffix that may still become a marker.
class MarkerScanner {
 public:
  void Feed(std::string_view chunk, FormatMachine& machine);
  // Flushes everything held back (partial markers become text) and calls OnFinish.
  void Finish(bool truncated, FormatMachine& machine);

 private:
  void Drain(FormatMachine& machine, bool final);

  std::string raw_;  // undecoded bytes: an incomplete UTF-8 sequence (at most 3 bytes)
  std::string buf_;  // valid UTF-8 not yet handed to the machine (starts at a partial marker)
};

}  // namespace k3::text::output
