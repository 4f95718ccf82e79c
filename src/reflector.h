#ifndef KINF_REFLECTOR_H
#define KINF_REFLECTOR_H
#endif
