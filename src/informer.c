#include "informer.h"
