#ifndef KINF_HTTP_H
#define KINF_HTTP_H
#endif
