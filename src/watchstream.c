#include "watchstream.h"
