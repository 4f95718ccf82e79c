#include "object.h"
