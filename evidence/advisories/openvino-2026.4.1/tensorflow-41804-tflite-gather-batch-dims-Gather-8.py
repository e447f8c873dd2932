#!/usr/bin/env python3
# Repro of cases/regression/gather.yaml::tensorflow-41804-tflite-gather-batch-dims: written by `gsc repro`; it exits 0 when the behaviour reproduces.
import base64
import json
import sys

import numpy as np

try:
    import ml_dtypes
except ImportError:  # needed only for bfloat16
    ml_dtypes = None

data = np.frombuffer(base64.b64decode('yUMnPrkGXT+c5Ke8qaExP6kTqb3+cHA/GbLIPjjoYb+/lWc/TlkgvOPnNL/7FLi+obFLvxBxYr9JCme/94l1v/FiI7/Axhm/tbKkPPJjNb+AhHK/zj9hv07z1z6OY0k/9WnHvuitOr+GWM8+TSmGPtm7Mb8300g/xBjavh5odj94mtg9uHs2PxklT7/F4yk/BoB0v3PlOz4QqE+/O1DevXEjWb9/y2O+J3Mrv2tK8729ZUE/CoYWPpaqfz+IsG0/iebGPiKAuD5Z2jm+zqn5PgkCcD+fF4++mHqQvmHVKD73Pz48ZpEQP9dTLb1ieIW+dNq7Pv4XHz9uV3O/tSn9Pk6PTr+UF6m9bmtzP7Jpez9s8hO97AlSvYM8Iz7Lb3c/cwvCPn3AKD6VZJs+LuTzPk2AHz7gkmY/85w4vySN1D5PgJ68+Y8cvkSTRT9+uDK+4mOcPquclL4AbDy/0c7zvhSM1j6ntTw/CZICP5o/OD8Pjvi9/PHTPrkOpL5/XzS9avt4P7shMz+1TTg/mK5wvtZIxL4+ED+/kufqPlbpxD5keMg+lSEfv2DsDj93nw4+3oQiPi2tLj69C/g+Q0FqP0Vuqj5YDnG+loadvhpzFD/oCGy7ZuB0PhXNlz5+uUA/FCkBvyx28D0NKmi/ErPlPm0Sfb8zxHG/AUnrPkr6Jr62Mj8/i8w6vaVoqj4eZWQ/lWwlv3sfvz6By4o+5GBAPhiUeT9xTkA+bfixPUufUD5CIBo/5n0FPyUAIT7X7UA/tvVdPSopLj/+u0C+qUs/vhsLHL6I/z8/zCEsP3WxmL764OO+iOt+v7tVdr8CJ4u9oYB2Pp7T/L6HJlA//QEuP2D4RD8KDvA+pr8fP9axST5ZQE6/clz6vvafsD6z5u2+JNrpPTA0CT9L0iY/9v+/vREjNj8mXTa/UrtYv2flDj8elJI+g7UCPwYDBT/ZOzo/jhufPhiGLr2KPFw9c2dfv9wcYj7cyAw9JZwZP3E/BT+OH0s/8yctv1/zE7/TmVg/PRnMvg3pIT8YUAK+KVgdP/tzdL+0NlK/YAWvvlCYej8gQl0/LqElP3n5hj2/R2a/l5/GPi6fXL/nVqu+L0WnPk1BeD4qScM9Cee9vV8h+75S6Ki7atMmvkitMr8JLhU/YK6iPJSmO7+7ia++LmYVv3mW977hfSI/rWYXP+JRKj/KOP0+gDCnPt2yTz8NGQG/INtaPil5fL8O+20/+dzWPJDDlL7ELW2/E+USvxLvyb45W5o9ZnthvxWHIT6NRCI+T9o1PxN/gL6NIIa+ImNtv9XRNr+pL+m+8t46v54B9b4XXL8+25VZP6iKEz87pHQ/hU+lPP4GL74hQQc+6VlpPepEU7+Kg0C+IitnP49ycD8YMVY/FypWv+L/Zb/YedO+UV56v/+RDj/gLIM+N5XhvkrnYT9Yy6W+FpMOPeOryz11vwu/JeNrP8mnHz/anja+5x9+PQntcL/fQaG+FS9VP0WYXb99vdS6+OuDvt11fT5Po+09pHlRvdSWMD+DzMs+TB0Xv4o4Oj6DydA+UjEmvnt+XL8VGQm/HvsaPwIXTz8hLjY/15p1v6F4/71Jny2/QWOXPvTWY74YYns/wVsLv9TODj+5vdg+l40JP0nqxb6Miw2+o53bvnP6WL9Xu+g+UNfOPtojtj69di+/9iM+P8N1Or8n9Fu/20Qgv3idsL7HoXe+sPVLv35Rar8vb3u+u4sYP88cKj/WE0G/JgIYP1rCuD7Skjs/Wp0rP1NMHj+lhBk/bXmhvnUKQj/ymsO+kqhlP7AlST+LYFa+QZ87v1PYZz8olxA/SRx+v8s5Nb8nOUw/s+xsPxnCDz8gZSI/spsOv3GBiz5t6Go/6vyqvvEXC7+tUhe/J6IOvXYIKT65S549jSbRPrlkQD+afWw/HXeMvggnv74gBXK/guuQvixIRr/elRM+3A4ivagVib5S+w8/4XAbvx5wU79TMVu/1VjmPg6xsT4nUXq/6VISv6SxPj0y/2m/ponPvkgarD5c08y+B4vHvfoUTL/Pnki+BEcSP2i3pL5oElC+mb4Pvr5ucD86GnE/XaERPfGmqj4ccZw+Ew9hv1d/Yz/LhAU/yBWDPnlYjj40ql0/QmPrPjYJdT0uDaY+5MgkviymeT9oX9G+qMpLP4keCr8/pzm/5vcyv021E7/O9QM+1iCIPm5GtL5nm02/GqzuvmHlUj3OoX+/ryiCPvPWuT5h6i2+33snvpuq0j4F2Nc+oauyPntRWj8cYAg/ntphv0ndeb//NBs/WRQGvxVAZ79ksaE+P2MmPkORJL/qTmq/9DjUPmsreD82aFM/Hmz3vYhNbD8q/3W+Ironvjfw6r7/bls+tfUtPmHqer+4yJG+q5F8P6iMcj8iFw8+E1A+PU2fjT5H4zE/U301PwNONz5m8Gq/wbo7PxeeWL9z5PO+ALUfv3xfMr9tlne/02NAPpZdwz0MQlm/Q3RnPuvxYz+rKPe+fK8vP5h8fb4JEnC/MDotP674Qr8q10y+4GodP5nCFr8X7nI/v+wZv8zLcD8rsZI+HLAJP3LuAz8Kple/ZqBxvZW8br3i7n2/YPg3vp8cpD3EduQ+3Yervpv3bz8GaCA/cVkyvp1u2D7qMFO/WrpiP9Z0TD8QCbg+ZaB1vp6ZoT7w4DC/XY0DP87P5T4nhXo/ANPvPhjmND6x7zU+sWhzvpTJUT/DkF4/810/P/VHWT34Jco9ImgMP4D1P75p1wM/fBcrvzyRL78Wd8Y+oFEYv4cgE79YSY4+2L7FPFZ4Xz5xRac+YZFEvpeWXb/MWVg/agwPPhvpyT63LXG/0YF7P6IK3b1tlBm/cJRDPkyMnb4BiME+kYEgPzHIND/bkwC+f8p0v84r+z4jF3+/VPYOv5lpMb933G0/oLoIPwacJD/VNdA+S3gtPnz1Sj/Yw0o9+5lxPyaZ4T7XfAk+ILlzP3m8TL/WbPQ+mkUwPx9QL78THaK+4a5HP6koZD82NcY+xbcWP9XGHL4M0Uy/oc0Gv6Lw6D5WFII+oWwhvmE0LD74/am+0ZJRv7Thr77nVie+apm2vkm1fb9ojvE+iz+XvtNmGT6eIx2/DW7hvpW/z73PkI++7PkdvFg2Hb+xBJe++3elve+MTL7+s/a+VuO2vrl5Bj8R/zo/TgZ8P8PBcz4ce/Y+TWsNP8M+Srx97HC/9DWkvjuZhb5wMHW+Gpxsvx3hTD8V1bS+sDViP640w770KNU+8MP/PmQaWr8p5XA/o5Uxvm0Kdz+4MuQ+imUnvvsiLD/cSxU/j+OHvlXcKr+0Yym/nqlGv9U5Wb/af7o+VSjCPmT5Tr/bnHE/4LWFvvTOp76WwmK/39tzP2+XNT+UUe6+R+uYvspWqT54KE2/o4E+P1qUCD8zW7u+/hcUv/7tJ79Hhf0+n7oKP0aL+75/nk0/uUPePqo2DT+bwyM++802Pib8AL8ahKk+q+pfPtEeeb4q7ge/Wr/pPstUH7+4cYk8n50Uv7nvYj6VgsC+B8g2P5uwXD93gQI/KpLAPvXIeT84kA0/GLguP+UrFb88bPM9UhoVP2A4eT6yRCI/xup9v6GZGL85foQ+OLLfvka+Cb8TB2g/ynUcPhQ3ZT+lKxk/Jq1Wv2ENPz+QOnQ/2lg8P0IlPT6rhA8/GNLgPicqAT+uRWw/oQcev5vzw77seiW/0IRjP1t9Lr9rEQ6+4ANsPkqXC77AK6y+y3UevxeLZj9QdnI/c1vxu+j7Ab+sD2a+rEGNvczdKLxLi7Q9jttfP/xrH78XkQi/jp49P/FjVD6sEPU+6HnYvagM3b7Xp1I/j3AJv92Xej9wE1s/aQ3avgRvfT97X6C+77tPP3sfDb4WZUI/xSMgv5vmxj7tt1E/FSo+vnM+Fb8OFNw+qlI8v3AM6r5+O9O+olHQvlWjFr89zkO/NsBrPyxdyj6gC1G9jU76vi9hCj9tGG4+ETWtvpHQND+5aeA9pRrwPohdfr+FLTk/SPuHPQWKNb1lReU+oepOv7U1Ez85FeU+sNMGv9xIuj5ii4C+WOFNPqGtKz/dOao+Yc1pvtTkGD62gu2+exo6v8Hujz6vwie9fACTvi7c+76Ua3K/PfAxvxrnJ75laVW/mLJMvjskcL8WXkq/rQWjvRrBib7Cc/A92D7bPpO3zr6h83Y+3u9rvxYAVj/w1CY+hdjJPiz2OL8C314+rSj8vU6B+T4TCve+Pjg6PwzPyb5IS2M+pON/P30GVj8+A5q+1vP4PoDERb9zQkO/5gzDvgtoZL9NHfc+IJWkPsUi8z287l8/vH1fvqVsjT6sHNI+9vGHPhLAc797PSU/BhHdvo8rLz/3vwU/KQ72PG2Pur5YNL2+3AJlP3YyKb8dmA+/cZrjvZ7ML7/mKsy+Gh+tvc8zIj9pmzW/Nsa1vqKuHr/hZmY+gkgUvipbLj4NKFq/JVsGv+hWWL82F5E+B4fxPdIIez+aAe2+ZN1+P+ZXB7/tW3C/GOpnP6/UXj+mG6w+QwNJvja5Pb9b334/LwSfvgRSc781RmO/uBn0Pv/feL2/hyi+YotqP55ZR79EJm+/hArJvoDJKb8LBV6//lp0viymR7+5Now9ct4fPwi8Aj3ELls/NrajvpkmIj/iyCY+/1BzvhtaCT8s+Rs/u790PkEaSb8Pjpm+fvrBPufvur6nGao+/YYoP3n8qz7Q6k0+S1ndPVE3W74lp+Q+rQAQv7x7ZD1v+qK9WAU6Pyo5Nz7TxVm/zyHtvvoBNz8ijnA9jDpyv5tlM7/NccQ+/8nLvsooo730CXk/K6BUv+hG0D2DZVy/2iZivwvTXj4OaC2+yvxBP3adfL4Hh+q+Ox2RPviXTj9q1se+tCnIPp4k4b4pgQ+/jztcv2OYGz8PTtG+GWgXP3BtYL+vwa29R6JpvrHKBr1k5a4+I0V/vxojuDvAVlU/CWVAv6EAXj/HOQW/OKEtviBvtr71OhU/4KbMOJLNdD1jEBO/+g/pPtnN5D69cww+yObqvkfJgj5FJG2//Npyv7OO1T5erk0+Y2ypPp6CUb21EfO+yz3cvrlnWr+2muq+mYBgP2oXUz8j7ju/hhxsPwsqs74v4JE+mdwvPt5V1b6S7mK/8ezpvgcteT+1Nm0/4R3Wuwe4Xby2+68+Ie6iPv3vT7+fGEY/OVtdv5OWeD7AgKO+w7PzvrGF0bxmGqo+upAtPxDFVT538Vg/m7IOPcCQbL8AviO+G8ANvum9YT+eG3G/wq7dPvRlRD9J1b6+pZZ8PkfkPj68v+W+BH0NvaM2PT9POEm/HI1Rv9a3ED80atc+iW9Av3jCXr/320e/C81Dv1SZiD2kPmo+u15YPaMHDb+pcSO/Kak6v2TaF78KB2K8HcmbPlbFmD5ZT3Q+FpQavzpUBD+CCHA/DkVkvwMKp77LpwC9EtLKPRcBH7+0n24/W+lFP8F+ej+u8Ia+DwrXvg=='), dtype=np.float32).reshape((1, 512, 2))
indices = np.array([[3]], dtype=np.int64).reshape((1, 1))
INPUTS = {'data': data, 'indices': indices}
# openvino 2026.4.1-22982-e213a147257-releases/2026/4 (Gather-8, cpu)
# Observed: crash. crash: worker died with SIGSEGV
# Canonical (ONNX): [[[0.3919837772846222, -0.8824496269226074]]].
# Case: Gather {"axis": 1, "batch_dims": 1}; source: tensorflow#41804 https://github.com/tensorflow/tensorflow/issues/41804 (shapes from the report; the data and the index value 3 are chosen here, the report feeds placeholders; expected: reference engine)

def run(data, indices):
    """The native call, as the harness made it."""
    import openvino as ov
    from typing import Any
    def ov_module() -> Any:
        """The module that holds OpenVINO's API (Core, Model, Tensor, Type, __version__): ``openvino`` from 2023.1 on;
        in 2023.0 the top-level package is empty and all of it lives in ``openvino.runtime`` (removed in 2026)."""
        import openvino

        if hasattr(openvino, "Core"):
            return openvino
        import openvino.runtime

        return openvino.runtime

    def _string_type() -> Any:
        """ov.Type.string, or None in releases before it (2023.x: the release sweeps run them)."""
        ov = ov_module()

        return getattr(ov.Type, "string", None)

    def to_tensor(arr: np.ndarray) -> Any:
        """An ov.Tensor holding a copy of ``arr`` with its element type (bf16 and string included)."""
        ov = ov_module()

        if arr.dtype == object or arr.dtype.kind == "S":
            return ov.Tensor(arr.astype(str))  # ov.Tensor makes a string tensor from a NumPy str_ array
        if arr.dtype.name == "bfloat16":
            # NumPy has no native bfloat16, so ov.Tensor cannot take the array itself: copy its bits into a bf16 tensor.
            t = ov.Tensor(ov.Type.bf16, ov.Shape(list(arr.shape)))
            t.data.view(np.uint16)[...] = arr.view(np.uint16)
            return t
        # np.array(order="C"), not np.ascontiguousarray: the latter turns a 0-d array into shape (1,).
        return ov.Tensor(np.array(arr, order="C"))

    def from_tensor(t: Any) -> np.ndarray:
        """Copy an output ov.Tensor into NumPy with the same element type (bf16 -> ml_dtypes.bfloat16, string -> object)."""
        ov = ov_module()

        et = t.get_element_type()
        shape = tuple(t.get_shape())
        if _string_type() is not None and et == _string_type():
            out = np.empty(shape, dtype=object)
            out[...] = np.asarray(t.str_data).reshape(shape)
            return out
        if et == ov.Type.bf16:
            import ml_dtypes

            # OpenVINO exposes bf16 data as a float16-typed view of the raw bits; reinterpret them.
            return np.asarray(t.data).view(np.uint16).copy().view(ml_dtypes.bfloat16).reshape(shape)
        return np.array(t.data, copy=True).reshape(shape)

    params = [ov.opset8.parameter(list(data.shape), ov.Type.string if data.dtype == object else ov.Type.bf16 if data.dtype.name == 'bfloat16' else ov.Type(data.dtype), name='data'), ov.opset8.parameter(list(indices.shape), ov.Type.string if indices.dtype == object else ov.Type.bf16 if indices.dtype.name == 'bfloat16' else ov.Type(indices.dtype), name='indices')]
    args = list(params)
    node = ov.opset8.gather(*args, axis=1, batch_dims=1)
    model = ov.Model([node], params, 'Gather-8')
    compiled = ov.Core().compile_model(model, 'CPU')
    request = compiled.create_infer_request()
    request.infer([to_tensor(a) for a in (data, indices,)])
    result = from_tensor(request.get_output_tensor(0))
    return result


# The call killed (or hung) its process: run it in a child process and check how that ended.
import subprocess
if '--child' in sys.argv:
    run(**INPUTS)
    import ctypes, gc
    gc.collect()
    ctypes.CDLL(None).malloc_trim(0)  # glibc walks its free lists here: damaged memory shows
    sys.exit(0)
import re, signal
try:
    proc = subprocess.run([sys.executable, __file__, '--child'], timeout=120,
                          stderr=subprocess.PIPE, text=True)
    sys.stderr.write(proc.stderr)
except subprocess.TimeoutExpired as hung:
    err = hung.stderr.decode(errors='replace') if isinstance(hung.stderr, bytes) else hung.stderr or ''
    sys.stderr.write(err)
    damaged = [m for m in err.splitlines() if re.match('^(?:[\\w.]+\\(\\): .+|double free or corruption.*|corrupted .+|free\\(\\): .+)$', m.strip())]
    assert damaged, 'the child hung for 120 s without a heap message: the crash did not reproduce'
    print('reproduced: glibc reported', repr(damaged[0].strip()), 'and the child hung in its abort path (killed after 120 s)')
    sys.exit(0)
print('child process ended with', proc.returncode, '(expected -signal.SIGSEGV)')
assert -proc.returncode in [6, 7, 11], f'expected a memory-damage signal (SIGSEGV when recorded), got {proc.returncode}'
