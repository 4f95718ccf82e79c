#include "deltafifo.h"
