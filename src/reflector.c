#include "reflector.h"
