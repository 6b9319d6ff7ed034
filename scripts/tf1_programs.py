"""Run public TF1 programs under TensorFlow and under antcolony, changed only in their import lines,
and print a table of what each side gave.

The programs are not in this repository (they are other people's code): check the collections out
side by side in one folder, each as ``owner+name``, and point ``--source`` (or the environment
variable ``ANTCOLONY_TF1_PROGRAMS``) at it::

    git clone https://github.com/aymericdamien/TensorFlow-Examples  $DIR/aymericdamien+TensorFlow-Examples
    git clone https://github.com/nlintz/TensorFlow-Tutorials        $DIR/nlintz+TensorFlow-Tutorials
    git clone https://github.com/MorvanZhou/Tensorflow-Tutorial     $DIR/MorvanZhou+Tensorflow-Tutorial
    git clone https://github.com/golbin/TensorFlow-Tutorials        $DIR/golbin+TensorFlow-Tutorials
    git clone https://github.com/pkmital/tensorflow_tutorials       $DIR/pkmital+tensorflow_tutorials
    git clone https://github.com/hunkim/DeepLearningZeroToAll       $DIR/hunkim+DeepLearningZeroToAll
    git clone https://github.com/instillai/TensorFlow-Course $DIR/instillai+TensorFlow-Course
    git -C $DIR/instillai+TensorFlow-Course checkout 9da3c0a94303c3c29deacb42290665ce5cbd3519
    git clone https://github.com/nfmcclure/tensorflow_cookbook $DIR/nfmcclure+tensorflow_cookbook
    git -C $DIR/nfmcclure+tensorflow_cookbook checkout d998edfe7df11177df2ea17814be7bd6193788c9
    python scripts/tf1_programs.py --source $DIR

The last whole table (164 programs, one tree) is ``docs/tf1_programs_table.md``.

Two single files of TensorFlow's own r1.x tutorials go at their paths under ``$DIR/tensorflow+tensorflow``
(``tensorflow/examples/tutorials/mnist/mnist_deep.py`` at 3989ee55b1a99cbdc20fd08da2a4c8a6bc80f98a)
and ``$DIR/tensorflow+models`` (``tutorials/image/mnist/convolutional.py`` at
48251730feb72808545efa5efe68f3f90261b3f0); a program whose file is absent is reported missing.

What is rewritten, the same way on both sides (``rewrite``): ``import tensorflow as tf`` becomes
``import antcolony.compat.v1 as tf`` or ``import tensorflow.compat.v1 as tf`` (TF 2 in TF1 mode);
TF1's MNIST loader, which downloads, becomes ``scripts/tf1_programs_support.py``'s stand-in over
scikit-learn's digits (also where imported as ``tensorflow.examples.tutorials.mnist.input_data``,
indented or not); ``from tensorflow.contrib import rnn`` (gone from TF 2) becomes that
module's ``rnn``, which is ``tf.nn.rnn_cell`` and ``tf.nn``. Nothing else changes. Each side runs in
its own process, in its own empty folder (with copies of the program's data and of its helper
packages, such as pkmital's ``libs/``, rewritten alike), with a time limit; a program that prints its progress is
compared at the last step both sides reached.

Judging a match (``Metric.kind``): ``accuracy``, antcolony's within 0.05 of TF's or above it
(``percent``: the same in percent, 5 points);
``loss``, antcolony's at most 25 % (or 0.05) above TF's; ``band``, within 25 % (or 0.05) either
way (GAN losses, which are not minimised); ``output``, the same printed lines; ``runs``, both sides run to
the end (a program that prints only random draws, or nothing but plots).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
SUPPORT = HERE / "tf1_programs_support.py"
SOURCE_ENV = "ANTCOLONY_TF1_PROGRAMS"
DATA_FILE_LIMIT = 4 << 20  # neighbours of a program larger than this are not copied

AYM = "aymericdamien+TensorFlow-Examples"
NLI = "nlintz+TensorFlow-Tutorials"
MOR = "MorvanZhou+Tensorflow-Tutorial"
GOL = "golbin+TensorFlow-Tutorials"
PKM = "pkmital+tensorflow_tutorials"
HUN = "hunkim+DeepLearningZeroToAll"
TFT = "tensorflow+tensorflow"  # single files of r1.x, each at the commit its table row names
TFM = "tensorflow+models"
INS = "instillai+TensorFlow-Course"  # at 9da3c0a9 (2018, its TF1 codes/ tree)
NFM = "nfmcclure+tensorflow_cookbook"  # at d998edfe (2019, TF 1.x recipes on numpy data and iris)

IMPORTS = {
    "antcolony": "import antcolony.compat.v1 as tf",
    "tensorflow": "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()",
}
LINE_REWRITES = [
    (re.compile(r"^from tensorflow\.examples\.tutorials\.mnist import input_data\s*$", re.M),
     "import tf1_programs_support as input_data"),
    (re.compile(r"^from tensorflow\.contrib import rnn\s*$", re.M), "from tf1_programs_support import rnn"),
    (re.compile(r"^([ \t]*)import tensorflow\.examples\.tutorials\.mnist\.input_data as input_data[ \t]*$", re.M),
     r"\1import tf1_programs_support as input_data"),
]  # fmt: skip
# also indented: some programs import TensorFlow again inside a function
TF_IMPORT = re.compile(r"^(?P<indent>[ \t]*)import tensorflow as tf[ \t]*$", re.M)
SEED_LINES = (
    "\nimport random as _seed_random, numpy as _seed_np\n"
    "_seed_random.seed({seed}); _seed_np.random.seed({seed}); tf.set_random_seed({seed})"
)

STEP_LOSS = r"^Step (?P<key>\d+)\D.*?Loss[=:] *(?P<value>[-0-9.e]+)"
FINAL_ACCURACY = r"^(?:Testing )?Accuracy:? *(?P<value>[0-9.e-]+)"
EPOCH_COST = r"^Epoch: *(?P<key>\d+) *cost= *(?P<value>[-0-9.e]+)"
NLINTZ_EPOCH = r"^(?P<key>\d+) (?P<value>[0-9.]+)\s*$"


@dataclasses.dataclass(frozen=True)
class Metric:
    """A printed figure: ``pattern`` has a ``value`` group and, for progress lines, a ``key``."""

    pattern: str
    kind: str  # accuracy | loss | band | output | runs
    # progress lines without a key of their own, keyed by their position, so a run stopped by its
    # time limit is compared at the last line both sides printed
    numbered: bool = False


@dataclasses.dataclass(frozen=True)
class Program:
    repo: str
    path: str
    metrics: tuple[Metric, ...]
    timeout: float = 300.0
    label: str = ""  # where file stems repeat within a collection
    args: tuple[str, ...] = ()  # the program's own flags (a self-test, fewer steps)

    @property
    def name(self) -> str:
        return self.label or pathlib.Path(self.path).stem


def _acc_or_loss(*extra: Metric) -> tuple[Metric, ...]:
    return (Metric(FINAL_ACCURACY, "accuracy"), *extra, Metric(STEP_LOSS, "loss"), Metric(EPOCH_COST, "loss"))


OUTPUT = (Metric(r"^(?P<value>.+)$", "output"),)
RUNS = (Metric(r"^(?P<value>.+)$", "runs"),)
GAN_STEP = (Metric(r"^Step (?P<key>\d+): Generator Loss: \S+, Discriminator Loss: (?P<value>\S+)", "band"),)
V1 = "tensorflow_v1/examples/"
MOR_DIR = "tutorial-contents/"
GOLBIN_EPOCH = r"^Epoch: (?P<key>\d+) "
GOLBIN_ACCURACY = (Metric(r"^정확도: *(?P<value>[0-9.]+)$", "accuracy"),)  # "accuracy", in [0, 1]
GOLBIN_PERCENT = (Metric(r"^정확도: *(?P<value>[0-9.]+)$", "percent"),)  # the same in percent
GOLBIN_GAN = (Metric(GOLBIN_EPOCH + r"D loss: (?P<value>\S+) G loss", "band"),)
PKM_COST = (
    Metric(r"^(?P<value>-?[0-9.]+(?:e[-+]?[0-9]+)?)$", "loss", numbered=True),
)  # the last epoch's cost
PKM_ACCURACY = (Metric(r"^(?P<value>[01]\.[0-9]+(?:e-?[0-9]+)?)$", "accuracy"),)  # the last printed
PKM_EPOCH_COST = (Metric(r"^(?P<key>\d+) (?P<value>[0-9.]+(?:e[-+]?[0-9]+)?)$", "loss"),)
# hunkim's labs print "step cost ..." lines, "Epoch: 0001 cost = ...", a final "Accuracy: ..."
# (its value on the next line in some), or lists holding np.float32 reprs.
HUNKIM = (
    Metric(r"^Accuracy:\s*(?P<value>[0-9.e-]+)", "accuracy"),
    Metric(r"^Your score will be +\[\[(?P<value>\S+)\]\]", "band"),
    Metric(r"^Epoch: (?P<key>\d+),? [cC]ost:? =? *\[?(?P<value>[-0-9.e]+)", "loss"),
    Metric(r"^Step: *(?P<key>\d+)\s+(?:Cost|Loss): *(?P<value>\S+)", "loss"),
    Metric(
        r"^(?P<key>\d+),? (?:Cost:? +|\[(?:np\.float32\()?)?(?P<value>-?[0-9.]+(?:e[-+]?\d+)?|nan)(?:[\s,)]|$)",
        "loss",
    ),
    # lab-09-5/6 print [.., RMSE]: TF shows a fetched 0-d value as np.float32(v), antcolony as
    # array(v, dtype=float32) (the figure is compared; the repr difference is a known gap)
    Metric(r"(?:np\.float32\(|array\()(?P<value>[-0-9.e]+)(?:, dtype=float32)?\)\]$", "loss", numbered=True),
    Metric(r"cost: (?P<value>\S+)$", "loss"),
)
HUNKIM_LABS = [
    "02-1-linear_regression", "02-2-linear_regression_feed", "02-3-linear_regression_tensorflow.org",
    "03-2-minimizing_cost_gradient_update", "03-3-minimizing_cost_tf_optimizer", "03-X-minimizing_cost_tf_gradient",
    "04-1-multi_variable_linear_regression", "04-2-multi_variable_matmul_linear_regression",
    "04-3-file_input_linear_regression", "04-4-tf_reader_linear_regression",
    "05-1-logistic_regression", "05-2-logistic_regression_diabetes", "06-1-softmax_classifier",
    "06-2-softmax_zoo_classifier", "07-1-learning_rate_and_evaluation", "07-2-linear_regression_without_min_max",
    "07-3-linear_regression_min_max", "07-4-mnist_introduction", "09-1-xor", "09-2-xor-nn",
    "09-3-xor-nn-wide-deep", "09-4-xor_tensorboard", "09-5-linear_back_prop", "09-6-multi-linear_back_prop",
    "09-7-sigmoid_back_prop", "09-x-xor-nn-back_prop", "10-1-mnist_softmax", "10-2-mnist_nn",
    "10-3-mnist_nn_xavier", "10-4-mnist_nn_deep", "10-5-mnist_nn_dropout", "10-7-mnist_nn_higher_level_API",
    "11-1-mnist_cnn", "11-2-mnist_deep_cnn", "11-3-mnist_cnn_class", "11-4-mnist_cnn_layers",
    "11-X-mnist_cnn_low_memory", "12-1-hello-rnn", "12-2-char-seq-rnn", "12-3-char-seq-softmax-only",
    "12-4-rnn_long_char", "12-5-rnn_stock_prediction", "13-1-mnist_using_scope", "13-2-mnist_tensorboard",
    "13-3-mnist_save_restore",
]  # fmt: skip
# nfmcclure's recipes print their progress as "Loss = ...", "Step #N A = [[...]]"; many draw their
# data with numpy unseeded, so figures are compared within the band, not to the digit.
NFM_LOSS = (Metric(r"^(?:Train )?Loss = \[*(?P<value>-?[0-9.]+(?:e[-+]?\d+)?)\]*$", "loss", numbered=True),)
NFM_PROGRAMS = [
    Program(NFM, "01_Introduction/02_Creating_and_Using_Tensors/02_tensors.py", OUTPUT, label="nfm 01-02 tensors"),
    Program(NFM, "01_Introduction/03_Using_Variables_and_Placeholders/03_placeholders.py", RUNS, label="nfm 01-03 placeholders"),
    Program(NFM, "01_Introduction/04_Working_with_Matrices/04_matrices.py", RUNS, label="nfm 01-04 matrices"),
    Program(NFM, "01_Introduction/05_Declaring_Operations/05_operations.py", OUTPUT, label="nfm 01-05 operations"),
    Program(NFM, "01_Introduction/06_Implementing_Activation_Functions/06_activation_functions.py", (Metric(r"^\[ *(?P<value>-?[0-9.]+)", "band", numbered=True),), label="nfm 01-06 activations"),
    Program(NFM, "02_TensorFlow_Way/01_Operations_as_a_Computational_Graph/01_operations_on_a_graph.py", OUTPUT, label="nfm 02-01 graph"),
    Program(NFM, "02_TensorFlow_Way/02_Layering_Nested_Operations/02_layering_nested_operations.py", OUTPUT, label="nfm 02-02 nested"),
    Program(NFM, "02_TensorFlow_Way/03_Working_with_Multiple_Layers/03_multiple_layers.py", RUNS, label="nfm 02-03 layers"),
    Program(NFM, "02_TensorFlow_Way/04_Implementing_Loss_Functions/04_loss_functions.py", OUTPUT, label="nfm 02-04 losses"),
    Program(NFM, "02_TensorFlow_Way/05_Implementing_Back_Propagation/05_back_propagation.py", (Metric(r"^Ending Accuracy = (?P<value>\S+)", "accuracy"),), label="nfm 02-05 backprop"),
    Program(NFM, "02_TensorFlow_Way/06_Working_with_Batch_and_Stochastic_Training/06_batch_stochastic_training.py", (Metric(r"^Step #(?P<key>\d+) A = \[\[(?P<value>\S+)\]\]", "band"),), label="nfm 02-06 batch"),
    Program(NFM, "02_TensorFlow_Way/07_Combining_Everything_Together/07_combining_everything_together.py", (Metric(r"^Step #(?P<key>\d+) A = \[\[(?P<value>\S+)\]\]", "band"),), label="nfm 02-07 combining"),
    Program(NFM, "02_TensorFlow_Way/08_Evaluating_Models/08_evaluating_models.py", (Metric(r"^Accuracy on test set: (?P<value>\S+)", "accuracy"),), label="nfm 02-08 evaluating"),
    Program(NFM, "03_Linear_Regression/01_Using_the_Matrix_Inverse_Method/01_lin_reg_inverse.py", (Metric(r"^slope: (?P<value>\S+)", "band"),), label="nfm 03-01 inverse"),
    Program(NFM, "03_Linear_Regression/02_Implementing_a_Decomposition_Method/02_lin_reg_decomposition.py", (Metric(r"^slope: (?P<value>\S+)", "band"),), label="nfm 03-02 decomposition"),
    Program(NFM, "03_Linear_Regression/03_TensorFlow_Way_of_Linear_Regression/03_lin_reg_tensorflow_way.py", NFM_LOSS, label="nfm 03-03 tf way"),
    Program(NFM, "03_Linear_Regression/04_Loss_Functions_in_Linear_Regressions/04_lin_reg_l1_vs_l2.py", RUNS, label="nfm 03-04 l1 vs l2"),  # its L2 half diverges on both sides
    Program(NFM, "03_Linear_Regression/05_Implementing_Deming_Regression/05_deming_regression.py", NFM_LOSS, label="nfm 03-05 deming"),
    Program(NFM, "03_Linear_Regression/06_Implementing_Lasso_and_Ridge_Regression/06_lasso_and_ridge_regression.py", NFM_LOSS, label="nfm 03-06 lasso ridge"),
    Program(NFM, "03_Linear_Regression/07_Implementing_Elasticnet_Regression/07_elasticnet_regression.py", NFM_LOSS, label="nfm 03-07 elasticnet"),
    Program(NFM, "04_Support_Vector_Machines/02_Working_with_Linear_SVMs/02_linear_svm.py", NFM_LOSS, label="nfm 04-02 linear svm"),
    Program(NFM, "04_Support_Vector_Machines/03_Reduction_to_Linear_Regression/03_support_vector_regression.py", (Metric(r"^Test Loss = (?P<value>\S+)", "loss"),), label="nfm 04-03 svr"),
    Program(NFM, "04_Support_Vector_Machines/04_Working_with_Kernels/04_svm_kernels.py", NFM_LOSS, label="nfm 04-04 kernels"),
    Program(NFM, "04_Support_Vector_Machines/05_Implementing_Nonlinear_SVMs/05_nonlinear_svm.py", NFM_LOSS, label="nfm 04-05 nonlinear svm"),
    Program(NFM, "04_Support_Vector_Machines/06_Implementing_Multiclass_SVMs/06_multiclass_svm.py", NFM_LOSS, label="nfm 04-06 multiclass svm"),
    Program(NFM, "05_Nearest_Neighbor_Methods/03_Working_with_Text_Distances/03_text_distances.py", OUTPUT, label="nfm 05-03 text distances"),
    Program(NFM, "05_Nearest_Neighbor_Methods/05_An_Address_Matching_Example/05_address_matching.py", RUNS, label="nfm 05-05 address matching"),
    Program(NFM, "06_Neural_Networks/02_Implementing_an_Operational_Gate/02_gates.py", (Metric(r" = (?P<value>-?[0-9.]+)$", "band", numbered=True),), label="nfm 06-02 gates"),
    Program(NFM, "06_Neural_Networks/03_Working_with_Activation_Functions/03_activation_functions.py", (Metric(r"^sigmoid = (?P<value>\S+) relu", "band", numbered=True),), label="nfm 06-03 activations"),
    Program(NFM, "06_Neural_Networks/04_Single_Hidden_Layer_Network/04_single_hidden_layer_network.py", (Metric(r"^Generation: (?P<key>\d+)\. Loss = (?P<value>\S+)", "loss"),), label="nfm 06-04 hidden layer"),
    Program(NFM, "06_Neural_Networks/05_Implementing_Different_Layers/05_implementing_different_layers.py", RUNS, label="nfm 06-05 layers"),
    Program(NFM, "11_More_with_TensorFlow/02_Working_with_a_Genetic_Algorithm/02_genetic_algorithm.py", (Metric(r"^Generation: (?P<key>\d+), Best Fitness \(lowest MSE\): (?P<value>\S+)", "band"),), label="nfm 11-02 genetic"),
    Program(NFM, "11_More_with_TensorFlow/03_Clustering_Using_KMeans/03_k_means.py", (Metric(r"^Accuracy: (?P<value>\S+)", "accuracy"),), label="nfm 11-03 k-means"),
    Program(NFM, "11_More_with_TensorFlow/04_Solving_A_System_of_ODEs/04_solving_ode_system.py", RUNS, label="nfm 11-04 ode"),
]  # fmt: skip
PROGRAMS = [
    Program(AYM, V1 + "1_Introduction/helloworld.py", OUTPUT),
    Program(AYM, V1 + "1_Introduction/basic_operations.py", OUTPUT),
    Program(AYM, V1 + "2_BasicModels/linear_regression.py", (Metric(EPOCH_COST, "loss"),)),
    Program(AYM, V1 + "2_BasicModels/logistic_regression.py", _acc_or_loss()),
    Program(AYM, V1 + "2_BasicModels/nearest_neighbor.py", _acc_or_loss()),
    Program(AYM, V1 + "3_NeuralNetworks/autoencoder.py", (Metric(STEP_LOSS, "loss"),)),
    Program(AYM, V1 + "3_NeuralNetworks/bidirectional_rnn.py", _acc_or_loss()),
    Program(AYM, V1 + "3_NeuralNetworks/convolutional_network_raw.py", _acc_or_loss()),
    Program(AYM, V1 + "3_NeuralNetworks/dcgan.py", GAN_STEP),
    Program(AYM, V1 + "3_NeuralNetworks/gan.py", GAN_STEP),
    Program(AYM, V1 + "3_NeuralNetworks/multilayer_perceptron.py", _acc_or_loss()),
    Program(AYM, V1 + "3_NeuralNetworks/neural_network_raw.py", _acc_or_loss()),
    Program(AYM, V1 + "3_NeuralNetworks/recurrent_network.py", _acc_or_loss()),
    Program(AYM, V1 + "3_NeuralNetworks/variational_autoencoder.py", (Metric(r"^Step (?P<key>\d+), Loss: (?P<value>\S+)", "loss"),)),
    Program(AYM, V1 + "4_Utils/save_restore_model.py", _acc_or_loss()),
    Program(AYM, V1 + "4_Utils/tensorboard_advanced.py", _acc_or_loss()),
    Program(AYM, V1 + "4_Utils/tensorboard_basic.py", _acc_or_loss()),
    Program(NLI, "00_multiply.py", OUTPUT),
    Program(NLI, "01_linear_regression.py", (Metric(r"^(?P<value>-?[0-9.]+(?:e-?[0-9]+)?)\s*$", "band"),)),  # w, about 2
    Program(NLI, "02_logistic_regression.py", (Metric(NLINTZ_EPOCH, "accuracy"),)),
    Program(NLI, "03_net.py", (Metric(NLINTZ_EPOCH, "accuracy"),)),
    Program(NLI, "04_modern_net.py", (Metric(NLINTZ_EPOCH, "accuracy"),)),
    Program(NLI, "05_convolutional_net.py", (Metric(NLINTZ_EPOCH, "accuracy"),)),
    Program(NLI, "07_lstm.py", (Metric(NLINTZ_EPOCH, "accuracy"),)),
    Program(NLI, "08_word2vec.py", (Metric(r"^Loss at +(?P<key>\d+):? +(?P<value>\S+)", "loss"),)),
    Program(NLI, "09_tensorboard.py", (Metric(NLINTZ_EPOCH, "accuracy"),)),
    Program(NLI, "10_save_restore_net.py", (Metric(NLINTZ_EPOCH, "accuracy"),)),
    Program(NLI, "11_gan.py", (Metric(r"^(?P<key>\d+) \S+ (?P<value>\S+) ", "band"),)),
    Program(MOR, MOR_DIR + "201_session.py", OUTPUT),
    Program(MOR, MOR_DIR + "202_placeholder.py", OUTPUT),
    Program(MOR, MOR_DIR + "203_variable.py", OUTPUT),
    Program(MOR, MOR_DIR + "303_save_reload.py", OUTPUT),
    Program(MOR, MOR_DIR + "306_dataset.py", (Metric(r"^step: (?P<key>\d+)/200 \|train loss: (?P<value>\S+)", "loss"),)),
    Program(PKM, "python/01_basics.py", OUTPUT, label="pkmital 01 basics"),
    Program(PKM, "python/02_linear_regression.py", PKM_COST, label="pkmital 02 linear regression"),
    Program(PKM, "python/03_polynomial_regression.py", PKM_COST, label="pkmital 03 polynomial regression"),
    Program(PKM, "python/04_logistic_regression.py", PKM_ACCURACY, label="pkmital 04 logistic regression"),
    Program(PKM, "python/05_basic_convnet.py", PKM_ACCURACY, label="pkmital 05 basic convnet"),
    Program(PKM, "python/06_modern_convnet.py", PKM_ACCURACY, label="pkmital 06 modern convnet"),
    Program(PKM, "python/07_autoencoder.py", PKM_EPOCH_COST, label="pkmital 07 autoencoder"),
    Program(PKM, "python/08_denoising_autoencoder.py", PKM_EPOCH_COST, label="pkmital 08 denoising autoencoder"),
    Program(PKM, "python/09_convolutional_autoencoder.py", PKM_EPOCH_COST, label="pkmital 09 conv autoencoder"),
    Program(PKM, "python/10_residual_network.py", (Metric(r"^epoch: (?P<key>\d+) , train: \S+ , valid: (?P<value>\S+)", "accuracy"),), label="pkmital 10 residual network"),
    Program(PKM, "python/11_variational_autoencoder.py", (Metric(r"^Train cost: (?P<value>\S+)", "loss"),), timeout=600.0, label="pkmital 11 vae"),
    Program(MOR, MOR_DIR + "402_RNN_classification.py", (Metric(r"^train loss: \S+ \| test accuracy: (?P<value>\S+)", "accuracy"),)),
    Program(MOR, MOR_DIR + "404_AutoEncoder.py", (Metric(r"^train loss: (?P<value>\S+)", "loss"),)),
    Program(MOR, MOR_DIR + "503_visualize_gradient_descent.py", (Metric(r"^a= (?P<value>\S+) b=", "band"),)),
    Program(GOL, "03 - TensorFlow Basic/03 - Linear Regression.py", (Metric(r"^X: 5, Y: \[(?P<value>\S+)\]", "band"),), label="golbin 03-03 linear regression"),
    Program(GOL, "04 - Neural Network Basic/01 - Classification.py", GOLBIN_PERCENT, label="golbin 04-01 classification"),
    Program(GOL, "04 - Neural Network Basic/02 - Deep NN.py", GOLBIN_PERCENT, label="golbin 04-02 deep nn"),
    Program(GOL, "05 - TensorBoard, Saver/01 - Saver.py", GOLBIN_PERCENT, label="golbin 05-01 saver"),
    Program(GOL, "05 - TensorBoard, Saver/02 - TensorBoard.py", GOLBIN_PERCENT, label="golbin 05-02 tensorboard"),
    Program(GOL, "05 - TensorBoard, Saver/03 - TensorBoard2.py", GOLBIN_PERCENT, label="golbin 05-03 tensorboard2"),
    Program(GOL, "06 - MNIST/01 - MNIST.py", GOLBIN_ACCURACY, label="golbin 06-01 mnist"),
    Program(GOL, "06 - MNIST/02 - Dropout.py", GOLBIN_ACCURACY, label="golbin 06-02 dropout"),
    Program(GOL, "07 - CNN/01 - CNN.py", GOLBIN_ACCURACY, label="golbin 07-01 cnn"),
    Program(GOL, "07 - CNN/02 - tf.layers.py", GOLBIN_ACCURACY, label="golbin 07-02 tf.layers"),
    Program(GOL, "08 - Autoencoder/01 - Autoencoder.py", (Metric(GOLBIN_EPOCH + r"Avg. cost = (?P<value>\S+)", "loss"),), label="golbin 08-01 autoencoder"),
    Program(GOL, "09 - GAN/01 - GAN.py", GOLBIN_GAN, label="golbin 09-01 gan"),
    Program(GOL, "09 - GAN/02 - GAN2.py", GOLBIN_GAN, label="golbin 09-02 gan2"),
    Program(GOL, "10 - RNN/01 - MNIST.py", GOLBIN_ACCURACY, label="golbin 10-01 rnn mnist"),
    Program(GOL, "10 - RNN/02 - Autocomplete.py", GOLBIN_ACCURACY, label="golbin 10-02 autocomplete"),
    Program(GOL, "10 - RNN/03 - Seq2Seq.py", (Metric(GOLBIN_EPOCH + r"cost = (?P<value>\S+)", "loss"),), label="golbin 10-03 seq2seq"),
    *(Program(HUN, f"lab-{lab}.py", HUNKIM) for lab in HUNKIM_LABS),
    Program(HUN, "lab-10-X1-mnist_back_prop.py", (Metric(r"^(?P<value>[0-9.]+)$", "band", numbered=True),)),  # correct of 1000
    Program(HUN, "lab-11-5-mnist_cnn_ensemble_layers.py", (Metric(r"^Ensemble accuracy: (?P<value>\S+)", "accuracy"), *HUNKIM), timeout=600.0),
    Program(TFT, "tensorflow/examples/tutorials/mnist/mnist_deep.py", (Metric(r"^test accuracy (?P<value>\S+)", "accuracy"), Metric(r"^step (?P<key>\d+), training accuracy (?P<value>\S+)", "accuracy")), timeout=150.0),
    Program(TFM, "tutorials/image/mnist/convolutional.py", (Metric(r"^Test error: (?P<value>[0-9.]+)%", "loss"),), args=("--self_test",), label="convolutional self_test"),
    Program(TFM, "tutorials/image/mnist/convolutional.py", (Metric(r"^Test error: (?P<value>[0-9.]+)%", "loss"),), args=("--self_test", "--use_fp16"), label="convolutional self_test fp16"),
    Program(INS, "codes/0-welcome/code/0-welcome.py", OUTPUT, label="instillai 0-welcome"),
    Program(INS, "codes/0-welcome/code/TensorFlow_Test.py", OUTPUT, label="instillai TensorFlow_Test"),
    Program(INS, "codes/1-basics/basic_math_operations/code/basic_math_operation.py", OUTPUT, label="instillai basic_math_operation"),
    Program(INS, "codes/2-basics_in_machine_learning/linear_svm/code/linear_svm.py", (Metric(r"^Step #(?P<key>\d+), training accuracy= % \S+, testing accuracy= % (?P<value>\S+)", "percent"),), label="instillai linear_svm"),
    Program(INS, "codes/2-basics_in_machine_learning/multiclass_svm/code/multiclass_svm.py", (Metric(r"^Step #(?P<key>\d+), Loss= \S+, training accuracy= \S+, testing accuracy= (?P<value>\S+)", "accuracy"),), label="instillai multiclass_svm"),
    Program(MOR, MOR_DIR + "204_activation.py", RUNS),
    Program(MOR, MOR_DIR + "301_simple_regression.py", RUNS),
    Program(MOR, MOR_DIR + "302_simple_classification.py", RUNS),
    Program(MOR, MOR_DIR + "304_optimizer.py", RUNS),
    Program(MOR, MOR_DIR + "305_tensorboard.py", RUNS),
    Program(MOR, MOR_DIR + "403_RNN_regression.py", RUNS),
    Program(MOR, MOR_DIR + "406_GAN.py", RUNS),
    Program(MOR, MOR_DIR + "406_conditional_GAN.py", RUNS),
    Program(MOR, MOR_DIR + "501_dropout.py", RUNS),
    Program(MOR, MOR_DIR + "502_batch_normalization.py", OUTPUT),
    Program(NLI, "06_autoencoder.py", (Metric(r"^(?P<key>\d+) (?P<value>[0-9.]+)$", "loss"),)),
    Program(HUN, "lab-03-1-minimizing_cost_show_graph.py", RUNS),
    *NFM_PROGRAMS,
]  # fmt: skip


def rewrite(source: str, side: str, seed: int | None = None) -> str:
    """The program as one side runs it: its import lines replaced, nothing else. With ``seed``,
    the import line also seeds Python's and numpy's generators and TF's graph-level seed, the
    same way on both sides (the random streams still differ between the sides: their kernels
    draw differently)."""
    line = IMPORTS[side] + (SEED_LINES.format(seed=seed) if seed is not None else "")
    out = TF_IMPORT.sub(lambda m: "\n".join(m["indent"] + part for part in line.split("\n")), source)
    for pattern, line in LINE_REWRITES:
        out = pattern.sub(line, out)
    return out


@dataclasses.dataclass
class Run:
    status: str  # ok | failed | timeout | missing
    seconds: float
    stdout: str
    error: str = ""


def run_side(
    program: Program, source_dir: pathlib.Path, side: str, timeout: float, seed: int | None = None
) -> Run:
    original = source_dir / program.repo / program.path
    if not original.exists():
        return Run("missing", 0.0, "", f"{original} not found")
    work = pathlib.Path(tempfile.mkdtemp(prefix=f"tf1prog-{program.name}-{side}-"))
    try:
        _copy_data(original.parent, work)
        _copy_packages(original.parent, work, side)
        (work / "program.py").write_text(rewrite(original.read_text(), side, seed))
        shutil.copy(SUPPORT, work / SUPPORT.name)
        env = dict(os.environ, MPLBACKEND="Agg", TF_CPP_MIN_LOG_LEVEL="2", TF_USE_LEGACY_KERAS="1")
        env["TF1_PROGRAMS_SIDE"] = side
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(work), env.get("PYTHONPATH", "")]))
        start = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "program.py", *program.args], cwd=work, env=env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        try:
            out, err = proc.communicate(timeout=timeout)
            status = "ok" if proc.returncode == 0 else "failed"
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            status = "timeout"
        seconds = time.perf_counter() - start
        last_error = next((ln for ln in reversed(err.splitlines()) if ln.strip()), "")
        return Run(status, seconds, out, last_error if status == "failed" else "")
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _copy_data(folder: pathlib.Path, work: pathlib.Path) -> None:
    """The program's neighbours (a data.csv it reads, a samples/ folder it writes into), except
    other programs and anything large; each side gets its own copy."""
    for item in folder.iterdir():
        if item.suffix in (".py", ".ipynb") or item.name.startswith("."):
            continue
        if item.is_dir():
            shutil.copytree(item, work / item.name, ignore=_large_or_code)
        elif item.stat().st_size <= DATA_FILE_LIMIT:
            shutil.copy(item, work / item.name)


def _copy_packages(folder: pathlib.Path, work: pathlib.Path, side: str) -> None:
    """The program's own helper packages (a neighbouring folder with ``__init__.py``, as
    ``libs/``), their modules rewritten for the side like the program (unseeded)."""
    for package in folder.iterdir():
        if not (package / "__init__.py").is_file():
            continue
        for module in package.rglob("*.py"):
            target = work / module.relative_to(folder)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(rewrite(module.read_text(), side))


def _large_or_code(folder: str, names: list[str]) -> list[str]:
    base = pathlib.Path(folder)
    return [
        n
        for n in names
        if n.endswith((".py", ".ipynb"))
        or ((base / n).is_file() and (base / n).stat().st_size > DATA_FILE_LIMIT)
    ]


def figures(metric: Metric, stdout: str) -> dict[str, str]:
    found: dict[str, str] = {}
    for i, match in enumerate(re.finditer(metric.pattern, stdout, re.M)):
        numbered = metric.kind == "output" or metric.numbered
        key = match.groupdict().get("key") or (f"line{i}" if numbered else "final")
        found[key] = match.group("value").strip()
    return found


def _close(a: float, t: float) -> bool:
    return abs(a - t) <= max(0.25 * abs(t), 0.05)


def judge(kind: str, ours: str, theirs: str) -> bool:
    if kind == "output":
        return ours == theirs
    try:
        a, t = float(ours.strip("[]")), float(theirs.strip("[]"))
    except ValueError:
        return False
    if math.isnan(a) or math.isnan(t):
        return math.isnan(a) and math.isnan(t)  # both diverged (hunkim's lab-07-2 shows it does)
    if kind == "accuracy":
        return a >= t - 0.05
    if kind == "percent":
        return a >= t - 5.0
    if kind == "loss":
        return a <= t or _close(a, t)
    return _close(a, t)


def compare(program: Program, ours: Run, theirs: Run) -> tuple[bool, str, str, str]:
    """(match, what TF gave, what antcolony gave, the key compared) on the first metric both have."""
    for metric in program.metrics:
        if metric.kind == "runs":
            return ours.status == theirs.status == "ok", theirs.status, ours.status, "end"
        a, t = figures(metric, ours.stdout), figures(metric, theirs.stdout)
        if metric.kind == "output" and not a and not t and ours.status == theirs.status == "ok":
            return (
                True,
                "ok, 0 lines",
                "ok, 0 lines",
                "all",
            )  # a silent program (unittest's report is on stderr)
        common = [k for k in t if k in a]
        if not common:
            continue
        if metric.kind == "output":
            keys = list(t)
            same = ours.status == theirs.status and list(a.values()) == list(t.values())
            return same, f"{len(keys)} lines", f"{len(a)} lines", "all"
        key = common[-1]
        return judge(metric.kind, a[key], t[key]), t[key], a[key], key
    return False, _short(theirs), _short(ours), "-"


def seed_summary(values: list[float]) -> dict[str, float]:
    """Median and range of one side's per-seed figures."""
    ordered = sorted(values)
    n = len(ordered)
    median = (ordered[(n - 1) // 2] + ordered[n // 2]) / 2
    return {"median": median, "min": ordered[0], "max": ordered[-1], "n": n}


def compare_seeds(program: Program, runs: dict[str, list[Run]], last: int) -> dict[str, object]:
    """Both sides' distributions over seeds, on the first non-output metric every run printed.

    Each run gives one figure: the mean of its last ``last`` progress values at the keys every run
    of both sides reached (one sample is noisy: a GAN's losses swing from epoch to epoch). The
    sides match when antcolony's median lies within TF's per-seed range, or within the usual band
    (25 % or 0.05) of TF's median.
    """
    for metric in program.metrics:
        if metric.kind in ("output", "runs"):
            continue
        per_run = {side: [figures(metric, r.stdout) for r in rs] for side, rs in runs.items()}
        all_figs = [f for figs in per_run.values() for f in figs]
        if not all_figs or not all(all_figs):
            continue
        keys = [k for k in all_figs[0] if all(k in f for f in all_figs)][-last:]
        if not keys:
            continue
        summary = {
            side: seed_summary([sum(float(f[k].strip("[]")) for k in keys) / len(keys) for f in figs])
            for side, figs in per_run.items()
        }
        ours, theirs = summary["antcolony"], summary["tensorflow"]
        within = theirs["min"] <= ours["median"] <= theirs["max"]
        return {"keys": keys, **summary, "match": within or _close(ours["median"], theirs["median"])}
    return {"keys": [], "match": False}


def _short(run: Run) -> str:
    return run.status + (f": {run.error[:70]}" if run.error else "")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", default=os.environ.get(SOURCE_ENV), help="folder of owner+name checkouts")
    parser.add_argument(
        "--programs", default="", help="comma-separated names (file stems) to run; all by default"
    )
    parser.add_argument("--timeout", type=float, default=None, help="seconds per program and side")
    parser.add_argument("--sides", default="tensorflow,antcolony")
    parser.add_argument("--json", default=None, help="write the results here too")
    parser.add_argument(
        "--seeds", type=int, default=0, help="run each program this many times per side, seeded 0..N-1, "
        "and compare the distributions (median, range) of the last progress figures"
    )  # fmt: skip
    parser.add_argument("--last", type=int, default=5, help="with --seeds: progress figures averaged per run")
    args = parser.parse_args(argv)
    if not args.source:
        parser.error(f"--source (or ${SOURCE_ENV}) must name the folder holding the checkouts")
    source = pathlib.Path(args.source)
    wanted = {p for p in args.programs.split(",") if p}
    chosen = [p for p in PROGRAMS if not wanted or p.name in wanted]
    if args.seeds:
        return _main_seeds(chosen, source, args)
    rows = []
    for program in chosen:
        timeout = args.timeout or program.timeout
        runs = {side: run_side(program, source, side, timeout) for side in args.sides.split(",")}
        ours, theirs = runs.get("antcolony"), runs.get("tensorflow")
        if ours is None or theirs is None:
            match, t, a, key = False, "", "", "-"
        else:
            match, t, a, key = compare(program, ours, theirs)
        row = {
            "program": program.name, "source": f"{program.repo.replace('+', '/')}/{program.path}",
            "tf": f"{theirs.status} {t}" if theirs else "", "antcolony": f"{ours.status} {a}" if ours else "",
            "at": key, "tf_s": round(theirs.seconds, 1) if theirs else None,
            "antcolony_s": round(ours.seconds, 1) if ours else None, "match": match,
        }  # fmt: skip
        rows.append(row)
        print(
            f"{row['program']:<28} TF {row['tf'][:40]:<40} antcolony {row['antcolony'][:40]:<40} "
            f"at {key:<6} {row['tf_s']}s/{row['antcolony_s']}s {'match' if match else 'DIFFERS'}",
            flush=True,
        )
    # a program TensorFlow itself cannot run (tf.contrib, a download) has no result to compare
    ran = [r for r in rows if r["tf"].startswith(("ok", "timeout"))]
    print(f"\n{sum(r['match'] for r in ran)} of {len(ran)} programs that TF runs give TF's result")
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


def _main_seeds(chosen: list[Program], source: pathlib.Path, args: argparse.Namespace) -> int:
    rows = []
    for program in chosen:
        timeout = args.timeout or program.timeout
        runs: dict[str, list[Run]] = {"tensorflow": [], "antcolony": []}
        for seed in range(args.seeds):
            for side in runs:
                run = run_side(program, source, side, timeout, seed)
                runs[side].append(run)
                print(f"{program.name} seed {seed} {side}: {_short(run)} {run.seconds:.1f}s", flush=True)
        result = compare_seeds(program, runs, args.last)
        row = {
            "program": program.name,
            **result,
            "seconds": {s: [round(r.seconds, 1) for r in rs] for s, rs in runs.items()},
        }
        rows.append(row)
        line = " ".join(
            f"{side} median {row[side]['median']:.4g} range [{row[side]['min']:.4g}, {row[side]['max']:.4g}]"  # type: ignore[index]
            for side in runs
            if side in row
        )
        print(
            f"{program.name}: {line} over keys {result['keys']} {'match' if result['match'] else 'DIFFERS'}",
            flush=True,
        )
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
