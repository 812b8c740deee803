// Configuration knobs: every SPCCL_* variable is declared once in knobs.cc
// (name, default, help), read through these functions, listed by
// spccl_info and echoed at INFO when set.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace spccl {

struct KnobSpec {
  const char* name;
  const char* defaultValue;
  const char* help;
};

const std::vector<KnobSpec>& allKnobs();

// Value from the environment, else the declared default. Asking for an
// undeclared knob is a programming error (aborts in debug, WARN otherwise).
std::string knobString(const char* name);
int64_t knobInt(const char* name);

// Logs every SPCCL_* variable that is set ("X set by environment to Y")
// once per process at INFO, and warns about unknown SPCCL_* names.
void knobsEchoOnce();

}  // namespace spccl
