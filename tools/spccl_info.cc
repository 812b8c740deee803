// spccl_info: what this build of spccl is (version, optional features) and
// every registered algorithm, and every SPCCL_* knob with its default, its
// value here and its help text.
// `spccl_info --markdown` prints the knob table of the README;
// `spccl_info --topo` the host as spccl sees it (topo_report.h).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "base/knobs.h"
#include "coll/collective.h"
#include "flight_report.h"
#include "kernels/cpu/compress/compress_cpu.h"
#include "kernels/kernels.h"
#include "sparse/cpu_calibration.h"
#include "spccl.h"
#include "topo_report.h"

#ifndef SPCCL_CUDA_KERNELS_BUILT
#define SPCCL_CUDA_KERNELS_BUILT 0
#endif
#ifndef SPCCL_BUILD_FEATURES
#error "SPCCL_BUILD_FEATURES must be defined by the build (tools/CMakeLists.txt)"
#endif

namespace {

// Table cells may not contain '|' or line breaks.
std::string markdownCell(const char* text) {
  std::string cell;
  for (const char* c = text; *c; ++c) {
    if (*c == '|')
      cell += "\\|";
    else if (*c == '\n')
      cell += ' ';
    else
      cell += *c;
  }
  return cell;
}

void printMarkdown() {
  std::printf("| Variable | Default | Description |\n|---|---|---|\n");
  for (const spccl::KnobSpec& knob : spccl::allKnobs()) {
    std::string fallback = knob.defaultValue[0] ? "`" + markdownCell(knob.defaultValue) + "`" : "";
    std::printf("| `%s` | %s | %s |\n", knob.name, fallback.c_str(),
                markdownCell(knob.help).c_str());
  }
}

void printReport() {
  int version = 0;
  spcclGetVersion(&version);
  const char* features = SPCCL_BUILD_FEATURES;
  std::printf("spccl %d.%d.%d\n", version / 10000, version / 100 % 100, version % 100);
  std::printf("features: %s\n", features[0] ? features : "none");
  // The engine reduces host memory with the CPU kernels whatever is built;
  // the CUDA kernels (docs/cuda-kernels.md) serve tests/gpu and the bench.
  // The codecs' variant is the one this CPU runs (compress_cpu.h).
  std::printf(
      "kernels: cpu (engine; codecs %s)%s\n\n",
      spccl::kernels::codecVariantName(spccl::kernels::fastestCodecVariant()),
      SPCCL_CUDA_KERNELS_BUILT ? "; cuda built for tests/gpu and perf/kernels_bench only" : "");
  std::printf("dense algorithms (SPCCL_ALGO):\n");
  for (const spccl::DenseAlgorithm& algorithm : spccl::denseAlgorithms())
    std::printf("  %-14s %-20s %s\n", spccl::collTypeName(algorithm.type), algorithm.name,
                algorithm.description);
  // The figure to set SPCCL_SPARSE_CPU_NS_PER_PAIR to on this machine.
  std::printf(
      "\nsparse planner's CPU speed here: %.2f ns per pair of merge work on one core "
      "(SPCCL_SPARSE_CPU_NS_PER_PAIR)\n",
      spccl::sparse::timeMergePairs() * 1e9);
  std::printf("\nknobs (environment variables):\n");
  for (const spccl::KnobSpec& knob : spccl::allKnobs()) {
    const char* current = std::getenv(knob.name);
    bool set = current != nullptr && current[0] != '\0';
    std::printf("  %s\n", knob.name);
    std::printf("      default: %s\n", knob.defaultValue[0] ? knob.defaultValue : "(empty)");
    std::printf("      current: %s\n", set ? current : "(not set; the default applies)");
    std::printf("      %s\n", knob.help);
  }
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--markdown") == 0) {
      printMarkdown();
      return 0;
    }
    if (std::strcmp(argv[i], "--topo") == 0) return spccl::info::printTopoReport();
    if (std::strcmp(argv[i], "--dump") == 0 && i + 1 < argc)
      return spccl::info::printFlightReport(std::vector<std::string>(argv + i + 1, argv + argc));
    bool help = std::strcmp(argv[i], "-h") == 0 || std::strcmp(argv[i], "--help") == 0;
    std::fprintf(help ? stdout : stderr,
                 "usage: spccl_info [--markdown | --topo | --dump FILE...]\n"
                 "  prints the version, the optional features built in and every SPCCL_*\n"
                 "  variable; --markdown prints the variables as a Markdown table; --topo\n"
                 "  the host's topology (hwloc), the NICs and rails spccl would use here\n"
                 "  and the CUDA devices; --dump prints flight recorder dumps (spcclCommDump,\n"
                 "  or SPCCL_DEBUG_FILE after a timeout, abort or crash) and, given several\n"
                 "  ranks' dumps, which rank has not reached the call the others wait in\n");
    return help ? 0 : 2;
  }
  printReport();
  return 0;
}
