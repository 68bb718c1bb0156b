"""The toxicity-fairness study (Elsafoury & Katsigiannis) assembled from the metrics: one
model's fairness on a fairness set, dataset bias of training sets, and the Pearson tables."""
