// SPCCL_IB_HCA, in NCCL_IB_HCA's syntax: a comma-separated list of device
// names with an optional ":port" ("mlx5_0:1,mlx5_1"); names are prefixes
// unless the list starts with '='; a leading '^' selects every device and
// port except those listed ("^=mlx5_2"). Empty selects everything.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace spccl::ib {

struct HcaSpec {
  struct Entry {
    std::string name;
    int port = -1;  // -1: any port
  };
  bool exclude = false;
  bool exact = false;
  std::vector<Entry> entries;
};

HcaSpec parseHcaSpec(const std::string& text);
bool hcaSelected(const HcaSpec& spec, const std::string& device, int port);

// Where a selected port comes in the spec's list: the index of the first
// entry naming it, so "mlx5_1,mlx5_0" puts mlx5_1's ports first. 0 for
// every port when the spec excludes or lists nothing (discovery order).
size_t hcaListPosition(const HcaSpec& spec, const std::string& device, int port);

}  // namespace spccl::ib
