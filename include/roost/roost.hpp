// roost: a task-parallel runtime for C++ that runs each task close to its data.
#pragma once
#include "roost/detail/min_max_aside.hpp"  // C headers' min/max macros kept out, given back at the end
#include "roost/errors.hpp"
#include "roost/data.hpp"
#include "roost/final.hpp"
#include "roost/memory.hpp"
#include "roost/observer.hpp"
#include "roost/options.hpp"
#include "roost/parallel.hpp"
#include "roost/per_worker.hpp"
#include "roost/preempt.hpp"
#include "roost/runtime.hpp"
#include "roost/task_group.hpp"
#include "roost/touch.hpp"

#include "roost/detail/min_max_back.hpp"
