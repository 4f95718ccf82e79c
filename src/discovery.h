#ifndef KINF_DISCOVERY_H
#define KINF_DISCOVERY_H
#endif
