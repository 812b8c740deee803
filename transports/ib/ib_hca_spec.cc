#include "transports/ib/ib_hca_spec.h"

#include <cstdlib>
#include <sstream>

namespace spccl::ib {

HcaSpec parseHcaSpec(const std::string& text) {
  HcaSpec spec;
  size_t pos = 0;
  if (pos < text.size() && text[pos] == '^') {
    spec.exclude = true;
    ++pos;
  }
  if (pos < text.size() && text[pos] == '=') {
    spec.exact = true;
    ++pos;
  }
  std::stringstream items(text.substr(pos));
  std::string item;
  while (std::getline(items, item, ',')) {
    if (item.empty()) continue;
    HcaSpec::Entry entry;
    size_t colon = item.find(':');
    entry.name = item.substr(0, colon);
    if (colon != std::string::npos) entry.port = std::atoi(item.c_str() + colon + 1);
    spec.entries.push_back(entry);
  }
  return spec;
}

namespace {

bool entryNames(const HcaSpec& spec, const HcaSpec::Entry& e, const std::string& device, int port) {
  bool nameMatches = spec.exact ? device == e.name : device.compare(0, e.name.size(), e.name) == 0;
  return nameMatches && (e.port < 0 || e.port == port);
}

}  // namespace

bool hcaSelected(const HcaSpec& spec, const std::string& device, int port) {
  if (spec.entries.empty()) return true;
  bool listed = false;
  for (const HcaSpec::Entry& e : spec.entries)
    if (entryNames(spec, e, device, port)) listed = true;
  return listed != spec.exclude;
}

size_t hcaListPosition(const HcaSpec& spec, const std::string& device, int port) {
  if (spec.exclude) return 0;
  for (size_t i = 0; i < spec.entries.size(); ++i)
    if (entryNames(spec, spec.entries[i], device, port)) return i;
  return 0;
}

}  // namespace spccl::ib
