#ifndef KINF_JSON_H
#define KINF_JSON_H
#endif
