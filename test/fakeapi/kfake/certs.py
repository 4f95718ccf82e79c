"""Certificates (openssl CLI, EC P-256) and the kubeconfig of the fake cluster."""

import base64
import os
import secrets
import subprocess

_CA_EXT = ('basicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign,'
           'digitalSignature\nsubjectKeyIdentifier=hash\n')
_SERVER_EXT = ('basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,'
               'keyEncipherment\nextendedKeyUsage=serverAuth\n'
               'subjectAltName=IP:127.0.0.1,DNS:localhost\n')
_CLIENT_EXT = ('basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,'
               'keyEncipherment\nextendedKeyUsage=clientAuth\n')


def _openssl(*args, stdin=None):
    subprocess.run(['openssl'] + list(args), input=stdin, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _key(path):
    _openssl('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256',
             '-out', path)
    os.chmod(path, 0o600)


def _signed(d, name, subject, ext):
    key = os.path.join(d, name + '.key')
    csr = os.path.join(d, name + '.csr')
    extfile = os.path.join(d, name + '.ext')
    _key(key)
    _openssl('req', '-new', '-key', key, '-subj', subject, '-out', csr)
    with open(extfile, 'w') as f:
        f.write(ext)
    _openssl('x509', '-req', '-in', csr, '-CA', os.path.join(d, 'ca.crt'),
             '-CAkey', os.path.join(d, 'ca.key'), '-CAcreateserial', '-days', '3650',
             '-sha256', '-extfile', extfile, '-out', os.path.join(d, name + '.crt'))
    os.unlink(csr)
    os.unlink(extfile)


def generate(d):
    """Write ca, server, admin (O=system:masters) and viewer certs into d."""
    ca_cnf = os.path.join(d, 'ca.cnf')
    with open(ca_cnf, 'w') as f:
        f.write('[req]\ndistinguished_name = dn\nx509_extensions = v3_ca\nprompt = no\n'
                '[dn]\nCN = fakeapi-ca\n[v3_ca]\n' + _CA_EXT)
    _key(os.path.join(d, 'ca.key'))
    _openssl('req', '-x509', '-new', '-key', os.path.join(d, 'ca.key'), '-days', '3650',
             '-sha256', '-config', ca_cnf, '-out', os.path.join(d, 'ca.crt'))
    os.unlink(ca_cnf)
    _signed(d, 'server', '/CN=kube-apiserver', _SERVER_EXT)
    _signed(d, 'admin', '/O=system:masters/CN=admin', _CLIENT_EXT)
    _signed(d, 'viewer', '/CN=viewer', _CLIENT_EXT)
    for f in ('ca.srl',):
        p = os.path.join(d, f)
        if os.path.exists(p):
            os.unlink(p)


def new_token(prefix):
    return '%s-%s' % (prefix, secrets.token_hex(16))


def _b64(path):
    with open(path, 'rb') as f:
        return base64.b64encode(f.read()).decode()


def kubeconfig(d, url, admin_token, viewer_token):
    """The kubeconfig text: cluster fake; users admin, admin-cert, viewer."""
    cluster = ['- name: fake', '  cluster:', '    server: ' + url]
    if url.startswith('https:'):
        cluster.append('    certificate-authority-data: ' + _b64(os.path.join(d, 'ca.crt')))
    lines = ['apiVersion: v1', 'kind: Config', 'clusters:'] + cluster + [
        'users:',
        '- name: admin', '  user:', '    token: ' + admin_token,
        '- name: admin-cert', '  user:',
        '    client-certificate-data: ' + _b64(os.path.join(d, 'admin.crt')),
        '    client-key-data: ' + _b64(os.path.join(d, 'admin.key')),
        '- name: viewer', '  user:', '    token: ' + viewer_token,
        'contexts:',
        '- name: admin', '  context:', '    cluster: fake', '    user: admin',
        '    namespace: default',
        '- name: admin-cert', '  context:', '    cluster: fake', '    user: admin-cert',
        '    namespace: default',
        '- name: viewer', '  context:', '    cluster: fake', '    user: viewer',
        '    namespace: default',
        'current-context: admin', 'preferences: {}', '']
    return '\n'.join(lines)
