// The cost functions of SEMI-migration's planner (Omega_1,
// Omega_2, Phi_1, Phi_2 of Eq. (2) and (3)). The paper fits them from "a
// few sampling points" of a pre-test and of history; a least-squares line
// in the number of columns is that fit.
#pragma once

#include <span>

namespace spccl::migrate {

struct LinearCost {
  double intercept = 0;  // seconds
  double slope = 0;      // seconds per column
  double operator()(double columns) const { return intercept + slope * columns; }
};

// Least squares through (x[i], y[i]); one point or all x equal: a flat
// line through the mean of y. Needs at least one point.
LinearCost fitLinearCost(std::span<const double> x, std::span<const double> y);

}  // namespace spccl::migrate
