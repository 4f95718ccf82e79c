#include "auth.h"
