/*
 * Copyright 2026 The thrift-c-glib-rdma authors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file
 * except in compliance with the License. You may obtain a copy of the License at
 *
 *   http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software distributed under the
 * License is distributed on an "AS IS" BASIS, WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND,
 * either express or implied. See the License for the specific language governing permissions
 * and limitations under the License.
 */

/* ycsb_zipf.c: the zipfian request distribution (see ycsb_zipf.h). */
#include "config.h"

#include <math.h>

#include "ycsb_record.h"
#include "ycsb_zipf.h"

static double
zeta (guint64 n, double theta)
{
  double sum = 0;
  for (guint64 i = 1; i <= n; i++)
    sum += 1.0 / pow ((double) i, theta);
  return sum;
}

void
ycsb_zipf_init (YcsbZipf *z, guint64 n, double theta, gboolean scrambled)
{
  double zeta2 = zeta (2, theta);

  z->n = MAX (n, 1);
  z->theta = theta;
  z->alpha = 1.0 / (1.0 - theta);
  z->zetan = zeta (z->n, theta);
  z->eta = (1.0 - pow (2.0 / (double) z->n, 1.0 - theta)) / (1.0 - zeta2 / z->zetan);
  z->half_pow_theta = 1.0 + pow (0.5, theta);
  z->scrambled = scrambled;
}

guint64
ycsb_zipf_next (const YcsbZipf *z, double u)
{
  double uz = u * z->zetan;
  guint64 rank;

  if (uz < 1.0)
    rank = 0;
  else if (uz < z->half_pow_theta)
    rank = 1;
  else
    rank = (guint64) ((double) z->n * pow (z->eta * u - z->eta + 1.0, z->alpha));
  rank = MIN (rank, z->n - 1);
  return z->scrambled ? ycsb_fnv64 (rank) % z->n : rank;
}
