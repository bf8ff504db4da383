// Every paper-faithful serial reference, for those who want them all.
#pragma once

#include "cpu_reference/ancestors_to_offspring.hpp"
#include "cpu_reference/cumulative_offspring_to_ancestors.hpp"
#include "cpu_reference/metropolis.hpp"
#include "cpu_reference/multinomial.hpp"
#include "cpu_reference/multinomial_sorted.hpp"
#include "cpu_reference/permute_parallel.hpp"
#include "cpu_reference/permute_serial.hpp"
#include "cpu_reference/primitives.hpp"
#include "cpu_reference/rejection.hpp"
#include "cpu_reference/residual.hpp"
#include "cpu_reference/schemes.hpp"
#include "cpu_reference/ssp.hpp"
#include "cpu_reference/stratified.hpp"
#include "cpu_reference/systematic.hpp"
#include "cpu_reference/weights.hpp"
