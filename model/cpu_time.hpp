// CPU time of the calling thread: what a run or a comparison cost, whatever else the machine runs at the time.
#pragma once
#include <time.h>

namespace salasim {

inline double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

}  // namespace salasim
